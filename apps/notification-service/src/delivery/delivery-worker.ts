import type { BeforeApplicationShutdown, OnApplicationBootstrap } from '@nestjs/common';
import { Injectable, Logger } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { NotificationServiceConfig } from '../config.js';
import { Deliverer } from './deliverer.js';
import { reportPending } from './delivery.metrics.js';
import type { ClaimedMessage } from './messages.repository.js';
import { MessagesRepository } from './messages.repository.js';

/**
 * Each replica's delivery loop (docs/api/webhooks.md#retries-and-order): claims due messages
 * (FOR UPDATE SKIP LOCKED, so replicas never take the same one) every WEBHOOK_POLL_MS and as
 * soon as a slot frees, at most WEBHOOK_CONCURRENCY at once, and renews their leases every
 * third of WEBHOOK_DELIVERY_LEASE_SECONDS while their attempts run. A replica killed
 * mid-attempt renews nothing: its messages are due again when their leases lapse.
 */
@Injectable()
export class DeliveryWorker implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(DeliveryWorker.name);
  /** Names this process's claims; each claim adds a count. */
  private readonly worker = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  private readonly active = new Map<string, { claim: string; done: Promise<void> }>();
  private claims = 0;
  private pollTimer: NodeJS.Timeout | undefined;
  private renewTimer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  private wakeAgain = false;
  private running = false;
  private stopReporting: (() => void) | undefined;

  constructor(
    private readonly messages: MessagesRepository,
    private readonly deliverer: Deliverer,
    private readonly config: NotificationServiceConfig,
  ) {}

  onApplicationBootstrap(): void {
    this.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.stop();
  }

  /** Starts claiming; a no-op when already running. */
  start(): void {
    if (this.running) return;
    this.running = true;
    const leaseMs = this.config.WEBHOOK_DELIVERY_LEASE_SECONDS * 1000;
    this.renewTimer = setInterval(() => void this.renew(), leaseMs / 3);
    this.stopReporting = reportPending(() => this.messages.pendingCount());
    this.wake();
  }

  /**
   * Stops claiming and waits for the attempts running (each ends within
   * WEBHOOK_TIMEOUT_SECONDS); their leases are renewed until they are recorded.
   */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    clearTimeout(this.pollTimer);
    await this.ticking;
    const bound = (this.config.WEBHOOK_TIMEOUT_SECONDS + 5) * 1000;
    await Promise.race([
      Promise.all([...this.active.values()].map(({ done }) => done)),
      sleep(bound, undefined, { ref: false }),
    ]);
    clearInterval(this.renewTimer);
    this.stopReporting?.();
  }

  /** Looks for due messages now rather than at the next poll. */
  wake(): void {
    if (!this.running) return;
    if (this.ticking) {
      this.wakeAgain = true;
      return;
    }
    clearTimeout(this.pollTimer);
    this.ticking = this.claimWhileFree().finally(() => {
      this.ticking = undefined;
      if (!this.running) return;
      if (this.wakeAgain) {
        this.wakeAgain = false;
        this.wake();
      } else this.pollTimer = setTimeout(() => this.wake(), this.config.WEBHOOK_POLL_MS);
    });
  }

  /** Claims until every slot is busy or nothing is due. Never rejects. */
  private async claimWhileFree(): Promise<void> {
    try {
      while (this.running) {
        const free = this.config.WEBHOOK_CONCURRENCY - this.active.size;
        if (free <= 0) return;
        const claimed = await this.messages.claim(
          free,
          `${this.worker}:${++this.claims}`,
          this.config.WEBHOOK_DELIVERY_LEASE_SECONDS,
          this.config.orderWaitMs,
        );
        // Launched even if stop() began meanwhile: the claims are ours now.
        for (const message of claimed) this.launch(message);
        if (claimed.length < free) return;
      }
    } catch (err) {
      this.logger.error(`claiming messages failed: ${String(err)}`);
    }
  }

  private launch(message: ClaimedMessage): void {
    const done = this.deliverer.deliver(message).finally(() => {
      this.active.delete(message.id);
      this.wake();
    });
    this.active.set(message.id, { claim: message.claim, done });
  }

  /** Extends the leases of the attempts running. */
  private async renew(): Promise<void> {
    const held = [...this.active].map(([id, { claim }]) => ({ id, claim }));
    try {
      await this.messages.renew(held, this.config.WEBHOOK_DELIVERY_LEASE_SECONDS);
    } catch (err) {
      this.logger.warn(`renewing leases failed: ${String(err)}`);
    }
  }
}
