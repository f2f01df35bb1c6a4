import type { FuzzBody } from './bodies.js';
import { fuzzBody } from './bodies.js';
import type { Prng } from './prng.js';
import type { BodyField, FuzzRoute } from './routes.js';
import { idBody, oddString, wrongTypeValue } from './values.js';

/** The fixture the daemon fuzz must leave as it found it: a database and a snapshot of it. */
export const FIXTURE = { database: 'fuzz-fixture', snapshot: 'fuzz-snap' } as const;

function field(name: string, type: string, required = false): BodyField {
  return { name, type, required };
}

function route(method: string, path: string, bodyFields: BodyField[] = []): FuzzRoute {
  return {
    method,
    path,
    bearer: true,
    pathParams: [...path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]),
    queryParams: [],
    bodyType: bodyFields.length > 0 ? 'application/json' : undefined,
    bodyFields,
  };
}

/**
 * The daemon's routes as docs/api/local-daemon.md lists them. It publishes no OpenAPI
 * document, so they are written out here, in the shape routes.ts reads from the cloud's,
 * which lets bodies.ts generate their bodies too.
 */
export const DAEMON_ROUTES: readonly FuzzRoute[] = [
  route('GET', '/databases'),
  route('POST', '/databases', [
    field('name', 'string', true),
    field('template', 'string'),
    field('expiresAt', 'string'),
    field('ttlSeconds', 'integer'),
    field('temporary', 'boolean'),
    field('fromArchive', 'object'),
  ]),
  route('GET', '/databases/{name}'),
  route('PATCH', '/databases/{name}', [
    field('expiresAt', 'string'),
    field('ttlSeconds', 'integer'),
  ]),
  route('DELETE', '/databases/{name}'),
  route('POST', '/databases/{name}/snapshots', [field('name', 'string', true)]),
  route('GET', '/databases/{name}/snapshots'),
  route('DELETE', '/databases/{name}/snapshots/{snapshot}'),
  route('POST', '/databases/{name}/reset', [field('snapshot', 'string', true)]),
];

const HEX = '0123456789abcdef';

function hex(prng: Prng, length: number): string {
  let text = '';
  for (let i = 0; i < length; i++) text += prng.pick([...HEX]);
  return text;
}

/** True when `value` is a fromArchive the daemon would act on: a restore, never wanted here. */
export function archiveIsValid(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const { path, checksumSha256 } = value as Record<string, unknown>;
  return (
    typeof path === 'string' &&
    /^\/[^\0]{1,4095}$/.test(path) &&
    typeof checksumSha256 === 'string' &&
    /^[0-9a-f]{64}$/.test(checksumSha256)
  );
}

/**
 * True when a body (JSON bytes, or the value requestWithHost sends) holds a fromArchive: a
 * request that does must never succeed, as the fuzz's fromArchive is never valid.
 */
export function asksForArchive(body: unknown): boolean {
  try {
    const value: unknown = Buffer.isBuffer(body) ? JSON.parse(body.toString('utf8')) : body;
    const archive = (value as Record<string, unknown> | null | undefined)?.['fromArchive'];
    return archive !== undefined && archive !== null;
  } catch {
    return false;
  }
}

/**
 * A fromArchive that the daemon refuses before reading any file: a relative path, a
 * checksum that is no SHA-256, a field of the wrong type or no object at all. A valid path
 * goes only with a bad checksum and the other way round, so nothing is ever restored.
 */
export function invalidArchive(prng: Prng): unknown {
  if (prng.chance(0.3))
    return prng.pick<unknown>(['x', 1, true, [], ['/tmp/fuzz.tar.zst', hex(prng, 64)], '/tmp']);
  const goodPath = prng.pick(['/tmp/fuzz.tar.zst', '/etc/passwd', '/nonexistent/backup.tar.zst']);
  const badPath = prng.pick<unknown>([
    'fuzz.tar.zst',
    './fuzz.tar.zst',
    '../../etc/passwd',
    '',
    '/',
    '/tmp/a\u0000b',
    `/${'a'.repeat(5000)}`,
    'C:\\backup.tar.zst',
    42,
    null,
    ['/tmp/fuzz.tar.zst'],
  ]);
  const goodSum = hex(prng, 64);
  const badSum = prng.pick<unknown>([
    hex(prng, 63),
    `${hex(prng, 63)}g`,
    'A'.repeat(64),
    hex(prng, 65),
    '',
    `sha256:${hex(prng, 64)}`,
    1,
    null,
    { $ne: '' },
  ]);
  const [path, checksumSha256] = prng.pick([
    [badPath, goodSum],
    [goodPath, badSum],
    [badPath, badSum],
  ]);
  const archive: Record<string, unknown> = { path, checksumSha256 };
  if (prng.chance(0.15)) delete archive[prng.pick(['path', 'checksumSha256'])];
  if (prng.chance(0.15)) archive['extra'] = oddString(prng);
  return archive;
}

/**
 * Values of the daemon's fields: valid ones (a fresh name, the fixture as template, an
 * expiry the rules allow) and near misses or hostile ones. fromArchive has no valid value.
 */
function fieldValues(
  prng: Prng,
  name: string,
): { valid: (() => unknown)[]; bad: (() => unknown)[] } {
  const hostile = () => (prng.chance(0.5) ? oddString(prng) : wrongTypeValue(prng, 'string'));
  const soon = (seconds: number) => new Date(Date.now() + seconds * 1000).toISOString();
  const fresh = () => `fz-${idBody(prng, 8)}`;
  switch (name) {
    case 'name':
      return {
        valid: [fresh],
        bad: [
          () => FIXTURE.database,
          () => prng.pick(['postgres', 'template0', 'template1', 'pgcloud_daemon']),
          () => prng.pick(['Fuzz', '1fuzz', '_fuzz', 'fuzz.db', 'fuzz db', 'füzz', 'a'.repeat(64)]),
          () => `x"; DROP DATABASE "${FIXTURE.database}"; --`,
          () => `${FIXTURE.database}\u0000`,
          hostile,
        ],
      };
    case 'template':
      return {
        valid: [() => FIXTURE.database],
        bad: [
          () => FIXTURE.snapshot,
          () => prng.pick(['template0', 'template1', 'postgres', 'pgcloud_daemon']),
          () => `no-${idBody(prng, 8)}`,
          () => `${FIXTURE.database}' OR '1'='1`,
          () => 'a'.repeat(64),
          hostile,
        ],
      };
    case 'expiresAt':
      return {
        valid: [() => null, () => soon(3600), () => soon(29 * 86_400)],
        bad: [
          () => soon(-3600),
          () => soon(31 * 86_400),
          () => soon(3600).replace('Z', ''),
          () => soon(3600).replace('Z', '+25:00'),
          () => prng.pick(['tomorrow', '2030-02-30T00:00:00Z', '+275760-09-13T00:00:00.000Z', '0']),
          hostile,
        ],
      };
    case 'ttlSeconds':
      return {
        valid: [() => prng.pick([1, 3600, 86_400, 30 * 86_400])],
        bad: [
          () => prng.pick([0, -1, 1.5, 30 * 86_400 + 1, 2 ** 53 + 1, 1e308]),
          () => prng.pick(['60', '1e3', '']),
          () => wrongTypeValue(prng, 'integer'),
        ],
      };
    case 'temporary':
      return {
        valid: [() => prng.chance(0.5)],
        bad: [() => prng.pick<unknown>(['true', 1, 0, 'yes', null])],
      };
    case 'fromArchive':
      return { valid: [], bad: [() => invalidArchive(prng)] };
    case 'snapshot':
      return {
        valid: [() => FIXTURE.snapshot],
        bad: [
          () => `no-${idBody(prng, 8)}`,
          () => prng.pick(['', 'a'.repeat(64), 'FUZZ-SNAP', `${FIXTURE.snapshot}\u0000`]),
          hostile,
        ],
      };
    default:
      return { valid: [], bad: [hostile] };
  }
}

/**
 * A JSON object for the route made of the daemon's own fields. A third of them are clean:
 * valid values only, so POST /databases can succeed (it never carries fromArchive then).
 * The others take each value valid or bad, then at most one bend: a field missing, of the
 * wrong type, hostile, or a field no route takes.
 */
export function daemonObject(prng: Prng, route: FuzzRoute): Record<string, unknown> {
  const clean = prng.chance(0.35);
  const body: Record<string, unknown> = {};
  for (const { name, required } of route.bodyFields) {
    if (clean && name === 'fromArchive') continue;
    if (!required && !prng.chance(name === 'fromArchive' ? 0.15 : 0.3)) continue;
    const { valid, bad } = fieldValues(prng, name);
    const pool = valid.length > 0 && (clean || prng.chance(0.4)) ? valid : bad;
    body[name] = prng.pick(pool)();
  }
  if (clean) return body;
  const target = route.bodyFields.length > 0 ? prng.pick(route.bodyFields) : undefined;
  const bend = prng.int(6);
  if (bend === 0 && target) delete body[target.name];
  if (bend === 1 && target) body[target.name] = wrongTypeValue(prng, target.type);
  if (bend === 2 && target) body[target.name] = oddString(prng);
  const unknown = prng.pick(['extra', 'owner', 'oid', 'Name', 'constructor', 'prototype']);
  if (bend === 3) body[unknown] = prng.chance(0.5) ? oddString(prng) : { nested: true };
  // A bend must not turn fromArchive into something the daemon would restore.
  if (body['fromArchive'] !== undefined && archiveIsValid(body['fromArchive']))
    body['fromArchive'] = invalidArchive(prng);
  return body;
}

/**
 * A body for a request to the route: half of them the generic bad bodies of bodies.ts
 * (malformed JSON, other content types, oversize, deep nesting), half a JSON object of the
 * daemon's own fields. A route without a body gets one now and then.
 */
export function daemonBody(prng: Prng, route: FuzzRoute): FuzzBody {
  if (route.bodyFields.length === 0 && prng.chance(0.7))
    return { what: 'no body', surelyRefused: false };
  if (prng.chance(0.5)) return fuzzBody(prng, route);
  const contentType = prng.pick(['application/json', 'application/json; charset=utf-8']);
  const bytes = Buffer.from(JSON.stringify(daemonObject(prng, route)));
  return { bytes, contentType, what: 'daemon json', surelyRefused: false };
}

/** JSON that the daemon's body parser refuses, whatever the route and method. */
const UNREADABLE_JSON = ['{', '{"name":', "{'name':'x'}", '{"name":"x",}', 'nul', ']', '\u0000'];

/**
 * The body of a request that would change the fixture if the daemon read it: its JSON
 * parser, which runs before the token check and any handler, refuses it (400 unreadable,
 * 413 over 64 KiB), so the fuzz never changes or deletes what it checks afterwards.
 */
export function refusedBody(prng: Prng): FuzzBody {
  const contentType = 'application/json';
  return prng.pick([
    () => ({
      bytes: Buffer.from(prng.pick(UNREADABLE_JSON)),
      contentType,
      what: 'invalid json (guarded)',
      surelyRefused: true,
    }),
    () => {
      const whole = JSON.stringify({ name: `fz-${idBody(prng, 8)}`, snapshot: FIXTURE.snapshot });
      const bytes = Buffer.from(whole.slice(0, 1 + prng.int(whole.length - 1)));
      return { bytes, contentType, what: 'truncated json (guarded)', surelyRefused: true };
    },
    () => ({
      bytes: Buffer.from(JSON.stringify({ ttlSeconds: 1, pad: 'y'.repeat(70_000) })),
      contentType,
      what: 'over 64 KiB (guarded)',
      surelyRefused: true,
    }),
  ])();
}

/**
 * Authorization headers of callers without the token: none, malformed, of another scheme,
 * or the real token bent by a character, cut short, doubled or glued to its scheme.
 */
export function badAuthorization(prng: Prng, token: string): string | null {
  const last = token.at(-1) === 'A' ? 'B' : 'A';
  return prng.pick<() => string | null>([
    () => null,
    () => null,
    () => 'Bearer',
    () => 'Bearer ',
    () => `Bearer pgcd_${idBody(prng, 43)}`,
    () => `Bearer ${token.slice(0, -1)}`,
    () => `Bearer ${token}x`,
    () => `Bearer ${token.slice(0, -1)}${last}`,
    () => `Bearer${token}`,
    () => `Bearer ${token} ${token}`,
    () => `Token ${token}`,
    () => `Basic ${Buffer.from(`pgcloud:${token}`).toString('base64')}`,
    () => `Bearer ${'A'.repeat(6000)}`,
    () => 'Bearer pgcd_\u00ff\u00fe',
    () => 'Bearer null',
  ])();
}

/** Host headers that name no loopback address: DNS rebinding and near misses. */
export const FOREIGN_HOSTS: readonly string[] = [
  'evil.example',
  'localhost.evil.example',
  '127.0.0.1.nip.io',
  'localhost.',
  '127.0.0.2',
  '0.0.0.0',
  '[::ffff:127.0.0.1]',
  'localhost:99999',
  'localhost@evil.example',
  '[::1].evil.example',
];

/** Methods Node's HTTP parser knows, so a request with one reaches the daemon. */
export const ODD_METHODS: readonly string[] = [
  'PUT',
  'PATCH',
  'OPTIONS',
  'HEAD',
  'PROPFIND',
  'SEARCH',
  'GET',
  'POST',
  'DELETE',
];
