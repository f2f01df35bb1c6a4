import { Injectable, Logger } from '@nestjs/common';
import { SecretBox } from '@pgcloud/config';
import { NotificationServiceConfig } from '../config.js';
import { signatureHeaders } from '../signing/signature.js';
import { secretSealedFor } from '../signing/webhook-secret.js';
import type { AttemptOutcome } from '../targets/target-client.js';
import { TargetClient } from '../targets/target-client.js';
import {
  disabledReason,
  failureText,
  isDelivered,
  isDueToDisable,
  retryWaitMs,
} from './delivery-policy.js';
import { webhookDeliveries } from './delivery.metrics.js';
import type { ClaimedMessage } from './messages.repository.js';
import { MessagesRepository } from './messages.repository.js';

/**
 * Makes one attempt of a claimed message and records it: signs the body with the endpoint's
 * secrets, POSTs it, judges the outcome, schedules the retry or gives up, and disables an
 * endpoint whose deliveries all failed for WEBHOOK_DISABLE_AFTER. Logs name ids only: never
 * a secret, a signature, a body or a URL (its path may hold a token).
 */
@Injectable()
export class Deliverer {
  private readonly logger = new Logger(Deliverer.name);

  constructor(
    private readonly messages: MessagesRepository,
    private readonly client: TargetClient,
    private readonly box: SecretBox,
    private readonly config: NotificationServiceConfig,
  ) {}

  /** Never throws: a failure to record is logged, and the lapsed lease brings the message back. */
  async deliver(message: ClaimedMessage): Promise<void> {
    try {
      await this.attempt(message);
    } catch (err) {
      this.logger.error(`${message.id} to ${message.endpoint_id}: not recorded: ${String(err)}`);
    }
  }

  private async attempt(message: ClaimedMessage): Promise<void> {
    const at = new Date();
    const started = performance.now();
    const outcome = await this.send(message, at);
    const durationMs = performance.now() - started;
    const delivered = isDelivered(outcome);
    const retryWait = delivered
      ? undefined
      : retryWaitMs(this.config.retryScheduleMs, message.attempts);
    const recorded = await this.messages.record({
      message,
      at,
      durationMs,
      delivered,
      ...outcome,
      retryWaitMs: retryWait,
    });
    if (!recorded.recorded) {
      this.logger.warn(`${message.id} to ${message.endpoint_id}: its claim lapsed; not recorded`);
      return;
    }
    webhookDeliveries.inc({
      outcome: delivered ? 'delivered' : outcome.refused ? 'refused' : 'failed',
    });
    const what = `${message.id} (${message.type}) to ${message.endpoint_id}, attempt ${message.attempts}`;
    if (delivered) {
      this.logger.debug(`${what}: delivered`);
      return;
    }
    const next = recorded.nextAttemptAt
      ? `again at ${recorded.nextAttemptAt.toISOString()}`
      : 'given up';
    this.logger.log(`${what}: ${failureText(outcome)}; ${next}`);
    const since = recorded.failingSince;
    if (since && isDueToDisable(since, new Date(), this.config.disableAfterMs)) {
      const reason = disabledReason(this.config.WEBHOOK_DISABLE_AFTER, failureText(outcome));
      if (await this.messages.disable(message.endpoint_id, reason))
        this.logger.warn(`webhook endpoint ${message.endpoint_id} disabled: ${reason}`);
    }
  }

  /** Signs and sends one attempt made at `at`. */
  private async send(message: ClaimedMessage, at: Date): Promise<AttemptOutcome> {
    let secrets: string[];
    try {
      secrets = [message.secret_sealed, message.previous_secret_sealed]
        .filter((sealed): sealed is string => sealed !== null)
        .map((sealed) => this.box.open(sealed, secretSealedFor(message.endpoint_id)));
    } catch {
      return { error: 'its signing secret cannot be opened: was ENCRYPTION_KEY changed?' };
    }
    const timestamp = Math.floor(at.getTime() / 1000);
    const headers = signatureHeaders(secrets, message.id, timestamp, message.body);
    return this.client.post(message.url, { ...headers }, message.body);
  }
}
