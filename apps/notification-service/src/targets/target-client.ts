import type { LookupAddress } from 'node:dns';
import { lookup } from 'node:dns/promises';
import { readFileSync } from 'node:fs';
import type { ClientRequest, IncomingMessage } from 'node:http';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { isIP } from 'node:net';
import { rootCertificates } from 'node:tls';
import { refusal } from './address-check.js';

/** The most of a receiver's answer that is read; the rest is never looked at. */
export const MAX_ANSWER_BYTES = 64 * 1024;

/** How one attempt ended: the receiver's status, or why there is none. */
export interface AttemptOutcome {
  /** The status the receiver answered. */
  statusCode?: number;
  /** Why the attempt failed, when no status tells it (or a 3xx, which is not followed). */
  error?: string;
  /** True when the target was refused before any connection (its address or scheme). */
  refused?: boolean;
}

/** How targets are reached. */
export interface TargetClientOptions {
  /** The whole attempt, from resolving the host to the status, in milliseconds. */
  timeoutMs: number;
  /** WEBHOOK_ALLOW_PRIVATE_TARGETS: any address, and `http:` too. */
  allowPrivate: boolean;
  /** PEM certificates trusted for targets beside Node.js's own (WEBHOOK_CA_FILE's). */
  extraCa?: string;
}

/** The certificates of WEBHOOK_CA_FILE, read at start: a file that cannot be read stops it. */
export function readExtraCa(path: string | undefined): string | undefined {
  if (!path) return undefined;
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    const reason = (err as NodeJS.ErrnoException).code ?? String(err);
    throw new Error(`WEBHOOK_CA_FILE=${path} cannot be read (${reason})`);
  }
}

/**
 * POSTs webhooks to their targets (docs/api/webhooks.md#targets). The host is resolved at
 * each attempt and every address it resolves to is checked; the connection goes to those
 * checked addresses only (a lookup that answers them), so a second resolution cannot send it
 * elsewhere. TLS verifies the host name, redirects are not followed, at most
 * MAX_ANSWER_BYTES of the answer are read, and the whole attempt is bounded by timeoutMs.
 */
export class TargetClient {
  private readonly ca: string[] | undefined;

  constructor(private readonly options: TargetClientOptions) {
    this.ca = options.extraCa ? [...rootCertificates, options.extraCa] : undefined;
  }

  /** One attempt; never throws: a failure is an outcome with its reason. */
  async post(url: string, headers: Record<string, string>, body: string): Promise<AttemptOutcome> {
    const signal = AbortSignal.timeout(this.options.timeoutMs);
    try {
      return await this.attempt(new URL(url), headers, body, signal);
    } catch (err) {
      return { error: signal.aborted ? this.timedOut() : reasonOf(err) };
    }
  }

  private async attempt(
    target: URL,
    headers: Record<string, string>,
    body: string,
    signal: AbortSignal,
  ): Promise<AttemptOutcome> {
    if (target.protocol !== 'https:' && !(this.options.allowPrivate && target.protocol === 'http:'))
      return { refused: true, error: `refused: ${target.protocol} targets are not allowed` };
    const host = target.hostname.replace(/^\[(.*)\]$/, '$1');
    const addresses = await untilAborted(lookup(host, { all: true, verbatim: true }), signal);
    const refused = refusal(
      host,
      addresses.map(({ address }) => address),
      this.options.allowPrivate,
    );
    if (refused) return { refused: true, error: refused };
    const statusCode = await this.send(target, host, addresses, headers, body, signal);
    if (statusCode >= 300 && statusCode < 400)
      return { statusCode, error: 'a redirect, which is not followed' };
    return { statusCode };
  }

  /** Sends the request to the checked addresses; answers the status once it is in. */
  private send(
    target: URL,
    host: string,
    addresses: LookupAddress[],
    headers: Record<string, string>,
    body: string,
    signal: AbortSignal,
  ): Promise<number> {
    const https = target.protocol === 'https:';
    const options = {
      method: 'POST',
      hostname: host,
      port: target.port === '' ? undefined : Number(target.port),
      path: `${target.pathname}${target.search}`,
      headers: {
        ...headers,
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(body)),
        'user-agent': 'pgcloud-webhooks',
      },
      // A connection of its own: a pooled one may lead to an address checked before.
      agent: false,
      lookup: pinnedLookup(addresses),
      signal,
      ...(https ? { ca: this.ca, servername: isIP(host) ? undefined : host } : {}),
    };
    return new Promise<number>((resolve, reject) => {
      const request: ClientRequest = (https ? httpsRequest : httpRequest)(options, (answer) => {
        readSome(answer);
        resolve(answer.statusCode ?? 0);
      });
      request.on('error', reject);
      request.end(body);
    });
  }

  private timedOut(): string {
    return `timed out after ${this.options.timeoutMs / 1000} s`;
  }
}

/** A lookup that answers the addresses already resolved and checked. */
function pinnedLookup(addresses: LookupAddress[]): LookupFunction {
  return (_hostname, options, callback) => {
    const [first] = addresses;
    if (options.all) callback(null, addresses);
    else if (first) callback(null, first.address, first.family);
    else callback(new Error('no address'), '', 0);
  };
}

/** Reads at most MAX_ANSWER_BYTES of an answer and drops the connection after that. */
function readSome(answer: IncomingMessage): void {
  let read = 0;
  answer.on('data', (chunk: Buffer) => {
    read += chunk.length;
    if (read >= MAX_ANSWER_BYTES) answer.destroy();
  });
  answer.on('error', () => undefined);
}

/** The promise, or a rejection once the signal aborts (a DNS lookup cannot be cancelled). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(new Error('aborted'));
    signal.addEventListener('abort', abort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort));
  });
}

const REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ENOTFOUND: 'the host name does not resolve',
  EAI_AGAIN: 'the host name could not be resolved (temporary failure)',
  EPROTO: 'TLS handshake failed',
};

/** A failed attempt's reason, without the URL (its path or query may hold a token). */
function reasonOf(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code ?? '';
  if (REASONS[code]) return REASONS[code];
  if (/CERT|SELF_SIGNED|UNABLE_TO_VERIFY|ERR_TLS/.test(code))
    return `TLS certificate not trusted (${code})`;
  return code !== '' ? code : err instanceof Error ? err.message : String(err);
}
