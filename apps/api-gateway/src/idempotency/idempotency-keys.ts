import { randomUUID } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import { DomainError, httpStatusFor } from '@pgcloud/contracts';
import { GatewayConfig } from '../config.js';
import { decodeRecord, encodeRecord } from './idempotency-record.js';
import { IdempotencyStore } from './idempotency.store.js';
import type { StoredAnswer } from './sealed-answer.js';
import { keySlot, openAnswer, sealAnswer } from './sealed-answer.js';

/** A request that holds its key: it runs, and its answer settles the key. */
export interface FirstRequest {
  kind: 'first';
  requestId: string;
  slot: string;
  secret: Buffer;
  fingerprint: string;
  /** The record it claimed the slot with: only this request may settle it. */
  pending: string;
}

/** A request sent again after the first was answered: that answer is given again. */
export interface RepeatedRequest {
  kind: 'replay';
  answer: StoredAnswer;
}

/** How long a first answer is replayed (docs/api/idempotency.md). */
export const ANSWER_TTL_MS = 24 * 60 * 60 * 1000;

// A claim outlives its request: that ends RPC_TIMEOUT_MS after it arrived (its deadline),
// and this is room for a stalled gateway before its claim lapses and a retry may run. A
// gateway that dies mid-request holds the key that much longer (409 meanwhile).
const CLAIM_SLACK_MS = 30_000;

/**
 * Idempotency-Keys (docs/api/idempotency.md): the same key from the same user with the
 * same request within 24 h answers the first answer again and runs nothing; with another
 * request it is IDEMPOTENCY_KEY_REUSED; while the first is being answered,
 * OPERATION_IN_PROGRESS. Neither keys nor answers are ever logged.
 */
@Injectable()
export class IdempotencyKeys {
  private readonly logger = new Logger(IdempotencyKeys.name);
  private readonly claimTtlMs: number;

  constructor(
    private readonly store: IdempotencyStore,
    config: GatewayConfig,
  ) {
    this.claimTtlMs = config.RPC_TIMEOUT_MS + CLAIM_SLACK_MS;
  }

  /**
   * Claims the key for a request, or answers how the first request with it was answered.
   * When the store does not answer, a request with a key is refused (503) rather than run
   * unguarded: a retry through another gateway could then create a second time.
   */
  async claim(
    requestId: string,
    userId: string,
    key: string,
    fingerprint: string,
  ): Promise<FirstRequest | RepeatedRequest> {
    const { slot, secret } = keySlot(userId, key);
    const pending = encodeRecord({ state: 'pending', fingerprint, claim: randomUUID() });
    let held: string | null;
    try {
      held = await this.store.claim(slot, pending, this.claimTtlMs);
    } catch (err) {
      this.logger.warn(`Idempotency-Keys cannot be checked: ${String(err)}`);
      throw new DomainError(
        'SERVICE_UNAVAILABLE',
        'Idempotency-Keys cannot be checked right now; nothing was done. Try again shortly.',
      );
    }
    if (held === null) return { kind: 'first', requestId, slot, secret, fingerprint, pending };
    const record = decodeRecord(held);
    if (record.fingerprint !== fingerprint)
      throw new DomainError(
        'IDEMPOTENCY_KEY_REUSED',
        'This Idempotency-Key was sent before with a different request; use a new key.',
      );
    if (record.state === 'pending')
      throw new DomainError(
        'OPERATION_IN_PROGRESS',
        'A request with this Idempotency-Key is still being answered; try again shortly.',
      );
    return { kind: 'replay', answer: openAnswer(secret, record.answer) };
  }

  /** Keeps a successful answer for 24 h. */
  async answered(first: FirstRequest, data: unknown): Promise<void> {
    await this.keep(first, { data });
  }

  /**
   * Settles the key of a request that failed. A 4xx is the request's own answer (invalid,
   * not found, over quota, name taken, not ready): kept and replayed like a success, since
   * that request would earn it again, and the client learns what happened to the key. A
   * 5xx, or anything that is no DomainError, means nothing was started (timeouts nest): the
   * key is released, so a retry with it runs.
   */
  async failed(first: FirstRequest, err: unknown): Promise<void> {
    const status = err instanceof DomainError ? httpStatusFor(err.code) : 500;
    if (err instanceof DomainError && status < 500)
      return this.keep(first, { error: err.toBody() });
    try {
      await this.store.release(first.slot, first.pending);
    } catch (storeErr) {
      // The claim lapses by itself; until then a retry with the key gets 409.
      this.logger.warn(`Idempotency-Key not released: ${String(storeErr)}`);
    }
  }

  private async keep(first: FirstRequest, answer: StoredAnswer): Promise<void> {
    const record = encodeRecord({
      state: 'answered',
      fingerprint: first.fingerprint,
      answer: sealAnswer(first.secret, answer),
    });
    try {
      await this.store.replace(first.slot, first.pending, record, ANSWER_TTL_MS);
    } catch (err) {
      // The work is done and answered as it went; only its replay is lost. The claim lapses
      // by itself, and a retry after that would run again: say so.
      this.logger.error(`answer to an Idempotency-Key not kept: ${String(err)}`);
    }
  }
}
