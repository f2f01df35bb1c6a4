import type { Prng } from './prng.js';

const ID_ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';
const PREFIXES = ['proj', 'db', 'bkp', 'rstr', 'user', 'srv', 'tok', 'dev', 'whk'];

/** The id prefix a path parameter takes, or undefined for a database name. */
export function prefixOf(param: string): string | undefined {
  if (param === 'id' || param === 'project_id') return 'proj';
  if (param === 'backup_id') return 'bkp';
  if (param === 'restore_id') return 'rstr';
  if (param === 'webhook_id') return 'whk';
  return undefined;
}

/** `length` characters of [0-9a-z]. */
export function idBody(prng: Prng, length = 20): string {
  let body = '';
  for (let i = 0; i < length; i++) body += prng.pick([...ID_ALPHABET]);
  return body;
}

/** Odd strings: huge, non-ASCII, NUL, lone surrogates, control and markup characters. */
export function oddString(prng: Prng): string {
  return prng.pick([
    () => '',
    () => ' ',
    () => 'x'.repeat(1 + prng.int(5000)),
    () => 'ü'.repeat(1 + prng.int(2000)),
    () => 'Grüße 数据库 🐘',
    () => '\u0000',
    () => `ab\u0000cd`,
    () => '\ud800',
    () => 'a\udfffb',
    () => '\u202eevil',
    () => 'zero\u200bwidth',
    () => 'line\r\nbreak',
    () => "x' OR '1'='1",
    () => '"; DROP TABLE projects; --',
    () => '<script>alert(1)</script>',
    () => '../../etc/passwd',
    () => '%00%ff',
    () => '${jndi:ldap://x}',
    () => 'e\u0301',
  ])();
}

/** A path segment, already percent-encoded: malformed and unknown ids and names. */
export function badPathSegment(prng: Prng, param: string): string {
  const prefix = prefixOf(param) ?? 'db';
  const otherPrefix = prng.pick(PREFIXES.filter((p) => p !== prefix));
  return prng.pick([
    () => `${prefix}_${idBody(prng)}`,
    () => `${otherPrefix}_${idBody(prng)}`,
    () => `${prefix}_${idBody(prng, 19)}`,
    () => `${prefix}_${idBody(prng, 21)}`,
    () => `${prefix}_${idBody(prng)}`.toUpperCase(),
    () => `${prefix}-${idBody(prng)}`,
    () => 'nosuchdb',
    () => 'pg_catalog',
    () => 'postgres',
    () => 'a'.repeat(64),
    () => '1abc',
    () => 'x',
    () => '-1',
    () => '0',
    () => 'null',
    () => '%20',
    () => '%00',
    () => `${prefix}_%00${idBody(prng, 10)}`,
    () => '%FF',
    () => '%C3%28',
    () => '%ED%A0%80',
    () => '%C3%BC%E6%95%B0',
    () => '%F0%9F%90%98',
    () => '%2E%2E',
    () => '%2F',
    () => '%25',
    () => '%',
    () => '%ZZ',
    () => "'%20OR%20'1'%3D'1",
    () => 'A'.repeat(1000 + prng.int(5000)),
    () => encodeURIComponent(oddString(prng).replace(/[\ud800-\udfff]/g, '')).slice(0, 6000),
  ])();
}

/** A bad value for a query parameter of that type, percent-encoded, with its name. */
export function badQueryValue(prng: Prng, name: string, type: string): string {
  const value = (v: string): string => `${name}=${v}`;
  const shared = [
    () => value(''),
    () => name,
    () => value('%00'),
    () => value('%FF'),
    () => value('%'),
    () => value('x'.repeat(1 + prng.int(5000))),
    () => value('%C3%BC%F0%9F%90%98'),
    () => `${value('1')}&${value('2')}`,
    () => `${name}[]=1`,
    () => `${name}[]=1&${name}[]=2`,
    () => `${name}[a]=1`,
    () => `${name}[__proto__][x]=1`,
  ];
  const typed: Record<string, (() => string)[]> = {
    boolean: [
      () => value('yes'),
      () => value('TRUE'),
      () => value('1'),
      () => value('true&force=false'),
    ],
    integer: [
      () => value('-1'),
      () => value('0'),
      () => value('1001'),
      () => value('1.5'),
      () => value('abc'),
      () => value('1e309'),
      () => value('99999999999999999999'),
      () => value('0x10'),
      () => value('NaN'),
      () => value('Infinity'),
      () => value('%201'),
    ],
    string: [() => value('0000000100000000000000FF'), () => value('zz'), () => value('%2F..')],
  };
  return prng.pick([...shared, ...(typed[type] ?? typed['string'])])();
}

/** Parameters no route declares. */
export function unknownQuery(prng: Prng): string {
  return prng.pick([
    'foo=bar',
    '__proto__[x]=1',
    'constructor[prototype][x]=1',
    '%ZZ=1',
    '=&&=',
    'a=%FF',
    'force=true',
    'limit=-1',
    `q=${'y'.repeat(4000)}`,
  ]);
}

/** A plausible value of a field, valid or close to it, chosen by the field's name and type. */
export function plausibleValue(prng: Prng, name: string, type: string): unknown {
  if (name === 'name' || name === 'target_database')
    return prng.pick([`fuzz-${idBody(prng, 8)}`, `fz_${idBody(prng, 6)}`, 'a']);
  if (name === 'default_region' || name === 'region') return prng.pick(['local', 'nowhere']);
  if (name === 'target_time')
    return prng.pick(['latest', new Date().toISOString(), '2001-01-01T00:00:00Z', 'yesterday']);
  if (name === 'retention_days') return prng.pick([1, 7, 35, 36, 0]);
  if (name === 'config') return { cpu: prng.pick([0.25, 1, 17]), memory: 1, storage: 10 };
  if (name === 'device_code') return idBody(prng, 43);
  if (name === 'action') return prng.pick(['approve', 'deny']);
  if (name === 'user_code') return prng.pick(['BCDF-GHJK', 'bcdfghjk', 'AAAA-AAAA']);
  if (name === 'login') return `fuzz-${idBody(prng, 6)}`;
  if (name === 'email') return `${idBody(prng, 6)}@example.com`;
  if (name === 'url')
    return prng.pick([
      'https://hooks.example.com/fuzz',
      'http://hooks.example.com/fuzz',
      'https://169.254.169.254/latest/meta-data',
      'https://user:pass@hooks.example.com/',
    ]);
  if (name === 'events')
    return prng.pick([['*'], ['backup.failed', 'drill.failed'], ['database.exploded'], []]);
  if (type === 'integer' || type === 'number') return prng.int(100);
  if (type === 'boolean') return prng.chance(0.5);
  return `fuzz-${idBody(prng, 8)}`;
}

/** A value of another JSON type than `type`. */
export function wrongTypeValue(prng: Prng, type: string): unknown {
  const candidates: unknown[] = [
    null,
    true,
    -1,
    1.5,
    2 ** 53 + 1,
    1e308,
    'seven',
    '',
    [],
    [1, 'a'],
    {},
    { $gt: '' },
  ];
  const wrong = candidates.filter((value) => jsonType(value) !== type);
  return prng.pick(wrong);
}

function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}
