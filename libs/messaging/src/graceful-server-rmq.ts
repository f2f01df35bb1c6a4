import { ServerRMQ } from '@nestjs/microservices';

/** How long a stopping service waits for the broker to confirm replies already sent. */
const REPLY_CONFIRM_GRACE_MS = 250;

/**
 * Nest's RMQ server sends replies on a confirm channel without waiting for the confirm;
 * closing at once rejects those confirms with nobody to catch them. A short grace lets
 * the broker confirm what was already sent, so a stop loses no reply and logs no error.
 */
export class GracefulServerRMQ extends ServerRMQ {
  override async close(): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, REPLY_CONFIRM_GRACE_MS));
    await super.close();
  }
}
