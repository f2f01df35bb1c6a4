// Where a gateway request's time goes, from the histograms the apps already keep
// (/metrics on their management ports): the gateway's time per request, its RPC calls'
// round trips, and the services' handlers.
import type { HistogramTotals } from '@pgcloud/bench-support';
import { histogramTotals, scrapeMetrics } from '@pgcloud/bench-support';

/** One reading of the histograms a breakdown needs. */
export interface HopReading {
  http: HistogramTotals;
  rpcClient: HistogramTotals;
  handlers: HistogramTotals;
}

/** Mean milliseconds per HTTP request between two readings. */
export interface Hops {
  /** From the request's arrival at the gateway to the end of its answer. */
  gateway: number;
  /** The RPC calls' round trips, as the gateway waited for them. */
  rpc: number;
  /** The services' handlers, from taking a message to acknowledging it. */
  handlers: number;
}

const HTTP = 'pgcloud_http_request_duration_seconds';
const RPC_CLIENT = 'pgcloud_rpc_client_duration_seconds';
const RPC_HANDLER = 'pgcloud_rpc_handler_duration_seconds';

/**
 * Reads the gateway's histograms for `route` and every RPC it made, and the handlers of the
 * services it called (only the measured route runs meanwhile, so all of theirs are its).
 */
export async function readHops(
  gatewayUrl: string,
  route: string,
  serviceUrls: string[],
): Promise<HopReading> {
  const gateway = await scrapeMetrics(gatewayUrl);
  const services = await Promise.all(serviceUrls.map(scrapeMetrics));
  const handlers = { sum: 0, count: 0 };
  for (const text of services) {
    const totals = histogramTotals(text, RPC_HANDLER);
    handlers.sum += totals.sum;
    handlers.count += totals.count;
  }
  return {
    http: histogramTotals(gateway, HTTP, { route }),
    rpcClient: histogramTotals(gateway, RPC_CLIENT),
    handlers,
  };
}

/** Mean milliseconds per HTTP request of each hop between two readings. */
export function hopsBetween(before: HopReading, after: HopReading): Hops {
  const requests = after.http.count - before.http.count;
  const perRequest = (key: keyof HopReading) =>
    requests > 0 ? ((after[key].sum - before[key].sum) / requests) * 1000 : Number.NaN;
  return {
    gateway: perRequest('http'),
    rpc: perRequest('rpcClient'),
    handlers: perRequest('handlers'),
  };
}

/** The breakdown as lines: each hop's share of a request, the rest by difference. */
export function formatHops(label: string, hops: Hops): string[] {
  const f = (ms: number) => ms.toFixed(3).padStart(8);
  return [
    `${label}, mean ms per request:`,
    `  gateway itself (HTTP, token, rate limit, envelope) ${f(hops.gateway - hops.rpc)}`,
    `  broker and transport, both ways                   ${f(hops.rpc - hops.handlers)}`,
    `  service handlers (validation, query, answer)      ${f(hops.handlers)}`,
    `  total at the gateway                              ${f(hops.gateway)}`,
  ];
}
