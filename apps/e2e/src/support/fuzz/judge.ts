import { ERROR_STATUS } from './error-table.js';
import type { PlannedRequest } from './plan.js';
import type { RawAnswer } from './send.js';

/** Something a successful fuzzed request made or removed, for the leftover check. */
export interface Change {
  action: 'created' | 'deleted';
  kind: 'project' | 'database' | 'backup' | 'restore' | 'webhook' | 'device request' | 'other';
  /** The resource's key as the inventory names it (see inventory.ts). */
  key: string;
}

/** What one answer broke, and what it changed. */
export interface Verdict {
  problems: string[];
  change?: Change;
}

/** Paths whose answers are not wrapped (docs/api/errors.md#the-envelope): pages and documents. */
function unwrapped(path: string): boolean {
  return (
    path === '/device' ||
    path === '/docs' ||
    path.startsWith('/docs/') ||
    path === '/openapi.json' ||
    path === '/ca.pem'
  );
}

function errorEnvelopeProblems(answer: RawAnswer): string[] {
  if (answer.jsonError) return [`unreadable JSON: ${answer.jsonError}`];
  const body = answer.json as { success?: unknown; error?: Record<string, unknown> } | undefined;
  if (body?.success !== false || typeof body.error !== 'object' || body.error === null)
    return [`not an error envelope: ${answer.text.slice(0, 200)}`];
  const { code, message } = body.error;
  const problems: string[] = [];
  if (typeof code !== 'string' || !(code in ERROR_STATUS))
    problems.push(`unknown code ${String(code)}`);
  else if (ERROR_STATUS[code] !== answer.status)
    problems.push(`${code} answered ${answer.status}, the table says ${ERROR_STATUS[code]}`);
  if (typeof message !== 'string' || message.length === 0) problems.push('no message');
  return problems;
}

function successProblems(answer: RawAnswer): string[] {
  if (answer.jsonError) return [`unreadable JSON: ${answer.jsonError}`];
  const body = answer.json as { success?: unknown } | undefined;
  if (body?.success !== true || !('data' in body))
    return [`2xx without the success envelope: ${answer.text.slice(0, 200)}`];
  return [];
}

/** Judges one answer by docs/api/errors.md; `path` is the path as sent, query included. */
export function judge(request: PlannedRequest, path: string, answer: RawAnswer): Verdict {
  const bare = path.split('?')[0];
  const { status } = answer;
  if (status >= 500) return { problems: [`${status}: ${answer.text.slice(0, 300)}`] };
  if (status < 200 || (status >= 300 && status < 400))
    return { problems: [`unexpected status ${status}`] };
  const problems: string[] = [];
  if (!answer.headers['x-request-id']) problems.push('no X-Request-Id');
  const html = /text\/html/.test(String(answer.headers['content-type'] ?? ''));
  const foreign = Object.values(request.params).some((value) => value.kind === 'foreign');
  if (status < 300 && foreign && request.caller !== 'anonymous')
    problems.push("another user's id was accepted");
  // GET and HEAD bodies are never read; any other method's must not pass for no body.
  if (status < 300 && request.body.surelyRefused && !['GET', 'HEAD'].includes(request.method))
    problems.push('a body the gateway cannot read was accepted');
  if (request.method === 'HEAD') {
    if (answer.text.length > 0) problems.push('a HEAD answer with a body');
  } else if (unwrapped(bare) && (html || status < 300)) {
    // The page and documents answer as themselves; the form's own errors are HTML 4xx.
  } else if (status >= 400) {
    problems.push(...errorEnvelopeProblems(answer));
  } else {
    problems.push(...successProblems(answer));
  }
  return { problems, change: status < 300 ? changeOf(request.method, bare, answer) : undefined };
}

/** What a 2xx answer created or deleted, by its route. */
function changeOf(method: string, path: string, answer: RawAnswer): Change | undefined {
  const data = (answer.json as { data?: Record<string, unknown> } | undefined)?.data ?? {};
  const id = typeof data['id'] === 'string' ? data['id'] : '';
  if (method === 'DELETE') return { action: 'deleted', kind: 'other', key: deletedKey(path) };
  if (method !== 'POST') return undefined;
  if (path === '/auth/device') return { action: 'created', kind: 'device request', key: '' };
  if (path === '/projects') return { action: 'created', kind: 'project', key: `project:${id}` };
  if (/^\/projects\/[^/]+\/databases$/.test(path))
    return {
      action: 'created',
      kind: 'database',
      key: `database:${path.split('/')[2]}/${String(data['name'])}`,
    };
  if (/^\/projects\/[^/]+\/webhooks$/.test(path))
    return { action: 'created', kind: 'webhook', key: `webhook:${id}` };
  if (/\/backups$/.test(path)) return { action: 'created', kind: 'backup', key: `backup:${id}` };
  if (/\/restore$/.test(path))
    return { action: 'created', kind: 'restore', key: `restore:${String(data['restore_id'])}` };
  return undefined;
}

function deletedKey(path: string): string {
  const parts = path.split('/').map(decodeURIComponent);
  if (parts[3] === 'webhooks') return `webhook:${parts[4]}`;
  if (parts.length === 3) return `project:${parts[2]}`;
  if (parts.length === 5) return `database:${parts[2]}/${parts[4]}`;
  return `backup:${parts[6]}`;
}
