import { request as httpRequest } from 'node:http';
import type { Caller, PlannedRequest } from './plan.js';

/** The real ids of one user's fixtures. */
export interface UserFixtures {
  token: string;
  userId: string;
  projectId: string;
  databaseName: string;
  backupId: string;
  restoreId: string;
}

/** A raw answer: status, headers, text, and the JSON when the answer says it is JSON. */
export interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json?: unknown;
  jsonError?: string;
}

/** The request's path and query with fixture ids in place. */
export function pathOf(request: PlannedRequest, own: UserFixtures, foreign: UserFixtures): string {
  const path = request.route.path.replace(/\{([^}]+)\}/g, (_, param: string) => {
    const value = request.params[param];
    if (!value) return param;
    if (value.kind === 'literal') return value.raw;
    const fixtures = value.kind === 'own' ? own : foreign;
    if (param === 'id' || param === 'project_id') return fixtures.projectId;
    if (param === 'name') return fixtures.databaseName;
    if (param === 'backup_id') return fixtures.backupId;
    return fixtures.restoreId;
  });
  return request.query ? `${path}?${request.query}` : path;
}

/** Sends one request as given, bytes and all, and reads the whole answer. */
export function sendRaw(
  baseUrl: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: Buffer,
): Promise<RawAnswer> {
  const url = new URL(baseUrl);
  // A connection of its own, and the body's length always stated: Node's client sends a
  // DELETE's or GET's body without one, and the gateway would read it as the next request.
  const sent: Record<string, string> = { ...headers, connection: 'close' };
  if (body) sent['content-length'] = String(body.length);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        method,
        path,
        headers: sent,
        agent: false,
        timeout: 30_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const answer: RawAnswer = { status: res.statusCode ?? 0, headers: res.headers, text };
          if (/application\/json/.test(res.headers['content-type'] ?? '') && text.length > 0) {
            try {
              answer.json = JSON.parse(text);
            } catch (err) {
              answer.jsonError = String(err);
            }
          }
          resolve(answer);
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${method} ${path.slice(0, 200)} timed out`)));
    req.on('error', reject);
    req.end(body);
  });
}

/** The headers of a planned request sent by `caller` from `clientIp`. */
export function headersOf(
  request: PlannedRequest,
  caller: Caller,
  token: string | undefined,
  clientIp: string,
): Record<string, string> {
  const headers: Record<string, string> = { 'x-forwarded-for': clientIp };
  if (request.authorization !== undefined) {
    if (request.authorization !== null) headers['authorization'] = request.authorization;
  } else if (caller !== 'anonymous' && token) {
    headers['authorization'] = `Bearer ${token}`;
  }
  if (request.body.contentType) headers['content-type'] = request.body.contentType;
  if (request.requestId !== undefined) headers['x-request-id'] = request.requestId;
  return headers;
}
