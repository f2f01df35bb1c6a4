import type { IncomingMessage } from 'node:http';
import { get as httpGet } from 'node:http';
import { get as httpsGet } from 'node:https';
import { addAbortSignal } from 'node:stream';

/**
 * GETs `url` (http or https, trusting what fetch trusts: the system's CAs and
 * NODE_EXTRA_CA_CERTS) and answers once the status and headers are in; the body is the
 * answer itself, a stream the caller reads (or destroys). Node's own client, not fetch:
 * a body read through fetch's web streams cost about 0.4 s more CPU per GB here, on the
 * two cores a restore's download shares with its extraction or its replay.
 *
 * The body fails once `signal` is aborted, wherever its reader is: whole answers already
 * in but not yet read included (with Node 20's fetch, such a read could wait for ever).
 */
export function fetchBody(url: string, signal?: AbortSignal): Promise<IncomingMessage> {
  const get = new URL(url).protocol === 'https:' ? httpsGet : httpGet;
  return new Promise((resolve, reject) => {
    const request = get(url, signal ? { signal } : {}, (response) => {
      resolve(signal ? addAbortSignal(signal, response) : response);
    });
    request.once('error', reject);
  });
}
