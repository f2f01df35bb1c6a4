import { Counter, Gauge } from 'prom-client';

/*
 * Webhook deliveries as pgcloud_* metrics on prom-client's default registry (served on the
 * management port). No endpoint, project or event ids as labels: their number only grows.
 */

/**
 * Attempts recorded, by outcome: `delivered` (a 2xx), `failed` (any other answer, none in
 * time, or a connection or TLS failure), `refused` (the target's address or scheme is not
 * allowed: no connection was made).
 */
export const webhookDeliveries = new Counter({
  name: 'pgcloud_webhook_deliveries_total',
  help: 'Webhook delivery attempts, by outcome (delivered, failed, refused).',
  labelNames: ['outcome'] as const,
});

/** What this process asks, at each scrape, for the messages waiting (the delivery worker). */
const pendingSources = new Set<() => Promise<number>>();

/** Reports the pending messages at each scrape until the answered function is called. */
export function reportPending(source: () => Promise<number>): () => void {
  pendingSources.add(source);
  return () => pendingSources.delete(source);
}

/**
 * Events waiting for a delivery, of every endpoint, read from the messages table at each
 * scrape: every replica reads the same table, so take the max.
 */
export const webhookMessagesPending = new Gauge({
  name: 'pgcloud_webhook_messages_pending',
  help: 'Webhook messages waiting for a delivery attempt (the same on every replica).',
  async collect() {
    const counts = await Promise.all([...pendingSources].map((source) => source().catch(() => 0)));
    this.set(counts.length > 0 ? Math.max(...counts) : 0);
  },
});
