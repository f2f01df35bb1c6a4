import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LocalDatabaseDetail, LocalDatabaseList, LocalSnapshotList } from '@pgcloud/contracts';
import type { LocalDaemon } from '@pgcloud/devstack';
import type { ApiClient } from '@pgcloud/testing';
import { expectData } from '../support/assertions.js';
import type { FuzzBody } from '../support/fuzz/bodies.js';
import {
  asksForArchive,
  badAuthorization,
  DAEMON_ROUTES,
  daemonBody,
  daemonObject,
  FIXTURE,
  FOREIGN_HOSTS,
  ODD_METHODS,
  refusedBody,
} from '../support/fuzz/daemon-routes.js';
import { ERROR_STATUS } from '../support/fuzz/error-table.js';
import { fuzzSeed, Prng } from '../support/fuzz/prng.js';
import type { FuzzRoute } from '../support/fuzz/routes.js';
import { sendRaw } from '../support/fuzz/send.js';
import { badPathSegment, unknownQuery } from '../support/fuzz/values.js';
import { requestWithHost, sql } from '../support/local-daemon.js';
import { sharedDaemon } from '../support/shared-daemon.js';

/** Requests per route and caller: with nine routes and two callers, 450. */
const PER_ROUTE = 25;
/** Requests per route with a foreign Host, from either caller. */
const FOREIGN_PER_ROUTE = 4;
const CONCURRENCY = 4;
const ANSWER_TIMEOUT_MS = 30_000;

/** What an anonymous caller may hear: refusals that come before the token check, or it. */
const ANONYMOUS_CODES = ['AUTH_REQUIRED', 'NOT_FOUND', 'VALIDATION_ERROR', 'PAYLOAD_TOO_LARGE'];
const AT_FIXTURE = `/databases/${FIXTURE.database}`;
const READS = new Set(['GET', 'HEAD', 'OPTIONS']);

const CALLERS = ['token', 'anonymous'] as const;
type Caller = (typeof CALLERS)[number];

/** One request of the plan, complete: path, headers and body are fixed when it is planned. */
interface DaemonRequest {
  index: number;
  caller: Caller;
  route: FuzzRoute;
  method: string;
  path: string;
  /** The Authorization header, or null for none. */
  authorization: string | null;
  /** True when that header is exactly `Bearer <the token>`. */
  withToken: boolean;
  /** True when the path names the fixture database, plainly or percent-encoded. */
  fixture: boolean;
  body: FuzzBody;
  /** The fixture's name is in the path and the method could change it: the body is refused. */
  guarded: boolean;
  /** Sent with this Host (through requestWithHost, a JSON body of `json`) when set. */
  foreignHost?: string;
  json?: unknown;
}

/** An answer as the judge reads it, whichever client brought it. */
interface Answer {
  status: number;
  requestId?: string;
  body: unknown;
  text: string;
}

type Created = { name: string; expiresAt: string | null };

interface Outcome {
  requests: number;
  foreign: number;
  byStatus: Map<number, number>;
  serverErrors: number;
  failures: string[];
  successes: Map<string, number>;
  /** What the successes of POST /databases made, and when the daemon drops each itself. */
  created: Created[];
}

/**
 * The fixture's name, now and then with some letters percent-encoded: the daemon decodes
 * them, so such a path names the fixture as surely as the plain one and is guarded as it.
 */
function fixtureSegment(prng: Prng, name: string): string {
  if (prng.chance(0.8)) return name;
  return [...name].map((c) => (prng.chance(0.3) ? `%${c.charCodeAt(0).toString(16)}` : c)).join('');
}

function planRequest(
  prng: Prng,
  caller: Caller,
  route: FuzzRoute,
  token: string,
  index: number,
): DaemonRequest {
  let fixture = false;
  let path = route.path.replace(/\{([^}]+)\}/g, (_, param: string) => {
    if (prng.chance(0.5)) return badPathSegment(prng, param);
    if (param === 'name') fixture = true;
    return fixtureSegment(prng, param === 'name' ? FIXTURE.database : FIXTURE.snapshot);
  });
  if (prng.chance(0.15)) path += `?${unknownQuery(prng)}`;
  const method = prng.chance(0.8) ? route.method : prng.pick(ODD_METHODS);
  // The token holder now and then sends a bad header too, and is then refused as anyone.
  const withToken = caller === 'token' && prng.chance(0.95);
  const request: DaemonRequest = {
    index,
    caller,
    route,
    method,
    path,
    authorization: withToken ? `Bearer ${token}` : badAuthorization(prng, token),
    withToken,
    fixture,
    body: daemonBody(prng, route),
    guarded: false,
  };
  // Callers without the token are not guarded: that they cannot change anything is the
  // point, and a success of theirs fails the run of its own.
  if (fixture && withToken && !READS.has(method)) {
    request.body = refusedBody(prng);
    request.guarded = true;
  }
  return request;
}

/** A request with a Host the daemon must refuse before anything else, token or not. */
function planForeign(prng: Prng, route: FuzzRoute, token: string, index: number): DaemonRequest {
  const request = planRequest(prng, prng.pick(CALLERS), route, token, index);
  request.foreignHost = prng.pick(FOREIGN_HOSTS);
  // requestWithHost parses any JSON answer, and a HEAD's has an empty body: GET instead.
  if (request.method === 'HEAD') request.method = 'GET';
  // Node's client frames no body of these methods, and the daemon would read its bytes as
  // another request; a change to the fixture that can carry no oversize body goes without
  // the token, so that the token check refuses it too should the Host check not.
  const bodiless = ['GET', 'DELETE', 'OPTIONS'].includes(request.method);
  const changes = request.fixture && !READS.has(request.method);
  request.withToken = request.caller === 'token' && !(changes && bodiless);
  if (!request.withToken) request.caller = 'anonymous';
  request.authorization = request.withToken ? `Bearer ${token}` : null;
  request.guarded = changes && request.withToken;
  request.json = request.guarded ? { pad: 'y'.repeat(70_000) } : daemonObject(prng, route);
  if (bodiless) request.json = undefined;
  const what = request.guarded ? 'over 64 KiB (guarded)' : bodiless ? 'no body' : 'json';
  request.body = { what, surelyRefused: false };
  return request;
}

/** The whole plan, shuffled: every route from both callers, and some with a foreign Host. */
function planFuzz(prng: Prng, token: string): DaemonRequest[] {
  const plan: DaemonRequest[] = [];
  for (const route of DAEMON_ROUTES) {
    for (const caller of CALLERS)
      for (let i = 0; i < PER_ROUTE; i++)
        plan.push(planRequest(prng, caller, route, token, plan.length));
    for (let i = 0; i < FOREIGN_PER_ROUTE; i++)
      plan.push(planForeign(prng, route, token, plan.length));
  }
  for (let i = plan.length - 1; i > 0; i--) {
    const j = prng.int(i + 1);
    [plan[i], plan[j]] = [plan[j], plan[i]];
  }
  return plan;
}

function withTimeout<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} got no answer`)), ANSWER_TIMEOUT_MS);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

async function send(baseUrl: string, request: DaemonRequest): Promise<Answer> {
  if (request.foreignHost !== undefined) {
    const token = request.authorization?.replace('Bearer ', '');
    const { foreignHost, method, path, json: body } = request;
    const answer = await withTimeout(
      requestWithHost(baseUrl, foreignHost, method, path, { token, body }),
      'a request with a foreign Host',
    );
    const text = typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body);
    const requestId = answer.headers.get('x-request-id') ?? undefined;
    return { status: answer.status, requestId, body: answer.body, text };
  }
  const headers: Record<string, string> = {};
  if (request.authorization !== null) headers['authorization'] = request.authorization;
  if (request.body.contentType) headers['content-type'] = request.body.contentType;
  const raw = await sendRaw(baseUrl, request.method, request.path, headers, request.body.bytes);
  const id = raw.headers['x-request-id'];
  const requestId = typeof id === 'string' ? id : undefined;
  return { status: raw.status, requestId, body: raw.json, text: raw.text };
}

/** What is wrong with the answer by docs/api/local-daemon.md and the error table. */
function judge(request: DaemonRequest, answer: Answer): string[] {
  const { status } = answer;
  if (status >= 500) return [`${status}: ${answer.text.slice(0, 300)}`];
  if (status < 200 || (status >= 300 && status < 400)) return [`unexpected status ${status}`];
  const problems: string[] = [];
  if (!answer.requestId) problems.push('no X-Request-Id');
  const ok = status < 300;
  if (ok && request.foreignHost !== undefined) problems.push('a foreign Host was answered');
  if (ok && !request.withToken) problems.push('accepted without the token');
  if (ok && request.guarded) problems.push('a body that the parser must refuse was accepted');
  const creates = request.method === 'POST' && request.path.split('?')[0] === '/databases';
  if (ok && creates && asksForArchive(request.json ?? request.body.bytes))
    problems.push('a bad fromArchive was accepted');
  if (request.method === 'HEAD') {
    if (answer.text.length > 0) problems.push('a HEAD answer with a body');
    return problems;
  }
  const body = answer.body as { success?: unknown; data?: unknown; error?: unknown } | undefined;
  if (ok) {
    if (body?.success !== true || !('data' in body))
      problems.push(`2xx without the success envelope: ${answer.text.slice(0, 200)}`);
    return problems;
  }
  const error = body?.error as { code?: unknown; message?: unknown } | undefined;
  if (body?.success !== false || typeof error !== 'object' || error === null)
    return [...problems, `not an error envelope: ${answer.text.slice(0, 200)}`];
  const code = String(error.code);
  if (!(code in ERROR_STATUS)) problems.push(`unknown code ${code}`);
  else if (ERROR_STATUS[code] !== status)
    problems.push(`${code} answered ${status}, the table says ${ERROR_STATUS[code]}`);
  if (typeof error.message !== 'string' || error.message.length === 0) problems.push('no message');
  if (request.foreignHost !== undefined) {
    if (code !== 'FORBIDDEN_HOST') problems.push(`a foreign Host got ${code}, not FORBIDDEN_HOST`);
  } else if (!request.withToken && !ANONYMOUS_CODES.includes(code))
    problems.push(`a caller without the token learnt ${code}`);
  return problems;
}

async function sendOne(baseUrl: string, request: DaemonRequest, outcome: Outcome): Promise<void> {
  const host = request.foreignHost === undefined ? '' : ` Host ${request.foreignHost}`;
  const label =
    `#${request.index} ${request.caller}${host} ${request.method} ` +
    `${request.path.slice(0, 160)} [${request.body.what}]`;
  outcome.requests += 1;
  if (request.foreignHost !== undefined) outcome.foreign += 1;
  try {
    const answer = await send(baseUrl, request);
    outcome.byStatus.set(answer.status, (outcome.byStatus.get(answer.status) ?? 0) + 1);
    if (answer.status >= 500) outcome.serverErrors += 1;
    const problems = judge(request, answer);
    if (problems.length > 0)
      outcome.failures.push(`${label} -> ${answer.status}: ${problems.join('; ')}`);
    if (answer.status >= 300) return;
    const what = `${request.method} ${request.route.path}`;
    outcome.successes.set(what, (outcome.successes.get(what) ?? 0) + 1);
    const data = (answer.body as { data?: Partial<LocalDatabaseDetail> } | undefined)?.data;
    if (request.method === 'POST' && request.path.split('?')[0] === '/databases') {
      if (answer.status !== 201) outcome.failures.push(`${label} -> ${answer.status}, not 201`);
      if (typeof data?.name === 'string')
        outcome.created.push({ name: data.name, expiresAt: data.expiresAt ?? null });
    }
  } catch (err) {
    outcome.failures.push(`${label} -> no answer: ${String(err)}`);
  }
}

/** Sends the plan with a few requests in flight at once and judges every answer. */
async function runPlan(baseUrl: string, plan: DaemonRequest[]): Promise<Outcome> {
  const outcome: Outcome = {
    requests: 0,
    foreign: 0,
    byStatus: new Map(),
    serverErrors: 0,
    failures: [],
    successes: new Map(),
    created: [],
  };
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < plan.length) await sendOne(baseUrl, plan[next++], outcome);
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return outcome;
}

/**
 * Bad requests to every route of the local daemon (docs/api/local-daemon.md) from the token
 * holder, from callers without the token and with foreign Host headers, generated from a
 * seeded PRNG (FUZZ_SEED replays a run). Every answer must be a success or a 4xx error
 * envelope whose code and status are the error table's; the fixture must come through
 * untouched, and the daemon must hold nothing that a success did not create.
 */
describe('local daemon fuzz: bad requests to every route', () => {
  let daemon: LocalDaemon;
  let api: ApiClient;
  let fixture: LocalDatabaseDetail;
  let listedBefore: string[];
  let outcome: Outcome | undefined;

  const listed = async (): Promise<string[]> =>
    expectData<LocalDatabaseList>(await api.get('/databases'), 200)
      .databases.map((database) => database.name)
      .sort();
  const rows = async (): Promise<string[]> =>
    (
      await sql<{ note: string }>(
        fixture.connection.connectionString,
        'SELECT note FROM fuzz_rows ORDER BY id',
      )
    ).map((row) => row.note);

  before(async () => {
    daemon = await sharedDaemon();
    api = await daemon.api();
    fixture = expectData<LocalDatabaseDetail>(
      await api.post('/databases', { name: FIXTURE.database }),
      201,
    );
    await sql(
      fixture.connection.connectionString,
      "CREATE TABLE fuzz_rows (id int PRIMARY KEY, note text); INSERT INTO fuzz_rows VALUES (1, 'seed')",
    );
    expectData(await api.post(`${AT_FIXTURE}/snapshots`, { name: FIXTURE.snapshot }), 201);
    listedBefore = await listed();
    assert.ok(listedBefore.includes(FIXTURE.database));
  });

  after(async () => {
    // Whatever a failed run left would otherwise meet the suites after this one.
    if (!api) return;
    for (const name of [FIXTURE.database, ...(outcome?.created ?? []).map((c) => c.name)])
      await api.delete(`/databases/${encodeURIComponent(name)}`);
  });

  it('answers every bad request with a success or a 4xx envelope of the table', async () => {
    const seed = fuzzSeed();
    console.log(`local-daemon fuzz: seed ${seed} (FUZZ_SEED=${seed} replays this run)`);
    const plan = planFuzz(new Prng(seed), await daemon.token());
    const startedAt = Date.now();
    outcome = await runPlan(daemon.baseUrl, plan);
    const seconds = ((Date.now() - startedAt) / 1000).toFixed(1);
    const statuses = [...outcome.byStatus].sort(([a], [b]) => a - b).map(([s, n]) => `${s}: ${n}`);
    console.log(
      `local-daemon fuzz: ${outcome.requests} requests to ${DAEMON_ROUTES.length} routes ` +
        `(${outcome.foreign} with a foreign Host) in ${seconds} s; ` +
        `5xx: ${outcome.serverErrors}; statuses ${statuses.join(', ')}`,
    );
    assert.equal(outcome.requests, plan.length);
    assert.equal(outcome.serverErrors, 0, outcome.failures.join('\n'));
    assert.deepEqual(outcome.failures, [], `seed ${seed}`);
  });

  it('leaves the fixture, its data and its snapshot as they were', async () => {
    const now = expectData<LocalDatabaseDetail>(await api.get(AT_FIXTURE), 200);
    assert.equal(now.createdAt, fixture.createdAt);
    assert.equal(now.expiresAt, null, 'no PATCH moved its expiry');
    assert.equal(now.temporary, false);
    assert.deepEqual(await rows(), ['seed']);
    const { snapshots } = expectData<LocalSnapshotList>(
      await api.get(`${AT_FIXTURE}/snapshots`),
      200,
    );
    assert.deepEqual(
      snapshots.map(({ name }) => name),
      [FIXTURE.snapshot],
    );
    // The snapshot still holds the data: a change made now goes with a reset to it.
    await sql(fixture.connection.connectionString, "INSERT INTO fuzz_rows VALUES (2, 'later')");
    expectData(await api.post(`${AT_FIXTURE}/reset`, { snapshot: FIXTURE.snapshot }), 200);
    assert.deepEqual(await rows(), ['seed']);
  });

  it('holds the fixture and what the successes created, nothing else', async () => {
    assert.ok(outcome, 'the fuzz ran');
    const { created } = outcome;
    const now = new Set(await listed());
    const made = new Set(created.map((c) => c.name));
    const problems: string[] = [];
    for (const name of now)
      if (!listedBefore.includes(name) && !made.has(name)) problems.push(`${name} appeared`);
    for (const name of listedBefore) if (!now.has(name)) problems.push(`${name} disappeared`);
    // A success may have asked for a short life: the expiry sweep drops it, as it should.
    const due = (c: Created) => c.expiresAt !== null && Date.parse(c.expiresAt) <= Date.now();
    const expired = created.filter((c) => !now.has(c.name) && due(c));
    for (const c of created)
      if (!now.has(c.name) && !expired.includes(c)) problems.push(`${c.name} was made, is gone`);
    const successes = [...outcome.successes].map(([what, n]) => `${what}: ${n}`).join(', ');
    console.log(
      `local-daemon fuzz: successes ${successes || 'none'}; databases created: ` +
        `${created.length} (${expired.length} gone by their expiry); leftovers: ${problems.length}`,
    );
    assert.deepEqual(problems, []);
    for (const c of created.filter(({ name }) => now.has(name))) {
      const answer = await api.delete(`/databases/${encodeURIComponent(c.name)}`);
      if (answer.status !== 404 || !due(c)) expectData(answer, 200); // or swept just now
    }
    assert.deepEqual(await listed(), listedBefore);
  });
});
