import type { Prng } from './prng.js';
import type { BodyField, FuzzRoute } from './routes.js';
import { oddString, plausibleValue, wrongTypeValue } from './values.js';

/** A generated body: its bytes, the headers it goes with, and what it is. */
export interface FuzzBody {
  bytes?: Buffer;
  contentType?: string;
  what: string;
  /**
   * True when the gateway surely refuses it before any handler runs, whatever else the
   * request holds: unreadable or cut-off JSON, JSON that is no object, an unreadable
   * charset, a body of a type it does not read, a body over 64 KiB.
   */
  surelyRefused: boolean;
}

/** Bodies the JSON parser cannot read, so they never reach a handler. */
const INVALID_JSON = [
  '{',
  '{"a":',
  "{'name':'x'}",
  '{"name":"x",}',
  'nul',
  '{"name":"x"}}',
  '\u0000',
  '{"name":"\\x"}',
  '{"name":"\\ud800\\u"}',
  ']',
];

/** A body of plausible fields, some of them bent: the basis of most JSON bodies. */
function objectBody(prng: Prng, fields: BodyField[]): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const field of fields) {
    if (field.required || prng.chance(0.5))
      body[field.name] = plausibleValue(prng, field.name, field.type);
  }
  const bend = prng.int(5);
  const target = fields.length > 0 ? prng.pick(fields) : undefined;
  if (bend === 0 && target) body[target.name] = wrongTypeValue(prng, target.type);
  if (bend === 1 && target) delete body[target.name];
  if (bend === 2 && target) body[target.name] = oddString(prng);
  if (bend === 3) body[prng.pick(['extra', 'id', 'owner_id', 'tier', 'status'])] = 'x';
  return body;
}

function json(value: unknown, what: string, contentType = 'application/json'): FuzzBody {
  return { bytes: Buffer.from(JSON.stringify(value)), contentType, what, surelyRefused: false };
}

function refused(
  bytes: Buffer,
  what: string,
  contentType: string | undefined = 'application/json',
): FuzzBody {
  return { bytes, contentType, what, surelyRefused: true };
}

/** The types a JSON body is sent as: its own, none at all, or plain text. */
const JSON_SENT_AS = ['application/json', undefined, 'text/plain'];

/**
 * A body of the route cut off mid-way, as a dropped connection or a proxy leaves it: never
 * to be taken for an absent body, which an optional body's route reads as its default.
 */
function truncated(prng: Prng, fields: BodyField[]): FuzzBody {
  const body = objectBody(prng, fields);
  body[fields[0]?.name ?? 'target_database'] ??= 'copy';
  const whole = JSON.stringify(body);
  const bytes = Buffer.from(whole.slice(0, 1 + prng.int(whole.length - 1)));
  return refused(bytes, 'truncated json', prng.pick(JSON_SENT_AS));
}

/** A body for the route: odd JSON, odd encodings, odd content types, or none. */
export function fuzzBody(prng: Prng, route: FuzzRoute): FuzzBody {
  const fields = route.bodyFields;
  const choices: (() => FuzzBody)[] = [
    () => json(objectBody(prng, fields), 'json object'),
    () => json(objectBody(prng, fields), 'json object'),
    () => json({ ...objectBody(prng, fields), extra_field: oddString(prng) }, 'extra field'),
    () => json({}, 'empty object'),
    () => ({ ...json([objectBody(prng, fields)], 'array body'), surelyRefused: true }),
    () => ({ ...json(prng.pick([[], [1, 2], [[]]]), 'array body'), surelyRefused: true }),
    () => refused(Buffer.from(prng.pick(['1', '"x"', 'true', 'null'])), 'scalar body'),
    () => refused(Buffer.from(prng.pick(INVALID_JSON)), 'invalid json'),
    () => truncated(prng, fields),
    () => truncated(prng, fields),
    () => json(nested(prng), 'deep nesting'),
    () => ({
      ...json(objectBody(prng, fields), 'no content type'),
      contentType: undefined,
      surelyRefused: true,
    }),
    () => refused(Buffer.from('x'.repeat(70_000)), 'over 64 KiB'),
    () => json({ ...objectBody(prng, fields), pad: 'y'.repeat(66_000) }, 'padded'),
    () => invalidUtf8(prng, fields),
    () =>
      refused(Buffer.from('{"name":"x"}'), 'latin1 charset', 'application/json; charset=latin1'),
    () =>
      refused(Buffer.from('{"name":"x"}'), 'utf-16 charset', 'application/json; charset=utf-16'),
    () => ({ ...json(objectBody(prng, fields), 'text/plain', 'text/plain'), surelyRefused: true }),
    () => ({ ...json(objectBody(prng, fields), 'xml', 'application/xml'), surelyRefused: true }),
    () => multipart(prng, fields),
    () => urlencoded(prng, fields),
    () => ({
      bytes: Buffer.alloc(0),
      contentType: 'application/json',
      what: 'empty',
      surelyRefused: false,
    }),
    () => ({ what: 'no body', surelyRefused: false }),
  ];
  const body = prng.pick(choices)();
  // The padded body is over the limit too.
  if (body.bytes && body.bytes.length > 64 * 1024) body.surelyRefused = true;
  return body;
}

function nested(prng: Prng): unknown {
  let value: unknown = 'deep';
  const depth = 100 + prng.int(3000);
  for (let i = 0; i < depth; i++) value = prng.chance(0.5) ? [value] : { a: value };
  return value;
}

function invalidUtf8(prng: Prng, fields: BodyField[]): FuzzBody {
  const name = fields[0]?.name ?? 'name';
  const bad = prng.pick([[0xff], [0xc3, 0x28], [0xed, 0xa0, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80]]);
  const bytes = Buffer.concat([
    Buffer.from(`{"${name}":"ab`),
    Buffer.from(bad),
    Buffer.from('cd"}'),
  ]);
  return { bytes, contentType: 'application/json', what: 'invalid utf-8', surelyRefused: false };
}

function multipart(prng: Prng, fields: BodyField[]): FuzzBody {
  const boundary = `fuzz${prng.int(1e6)}`;
  const parts = fields.map(
    (f) =>
      `--${boundary}\r\nContent-Disposition: form-data; name="${f.name}"\r\n\r\n` +
      `${String(plausibleValue(prng, f.name, f.type))}\r\n`,
  );
  return {
    bytes: Buffer.from(`${parts.join('')}--${boundary}--\r\n`),
    contentType: `multipart/form-data; boundary=${boundary}`,
    what: 'multipart',
    surelyRefused: true,
  };
}

function urlencoded(prng: Prng, fields: BodyField[]): FuzzBody {
  const form = new URLSearchParams();
  for (const f of fields) form.set(f.name, String(plausibleValue(prng, f.name, f.type)));
  if (prng.chance(0.3)) form.set('extra', oddString(prng).replace(/[\ud800-\udfff]/g, ''));
  return {
    bytes: Buffer.from(form.toString()),
    contentType: 'application/x-www-form-urlencoded',
    what: 'urlencoded',
    surelyRefused: false,
  };
}

/** The body a request gets when it must not reach its handler: unreadable or cut-off JSON. */
export function unreadableBody(prng: Prng, route: FuzzRoute): FuzzBody {
  const body = prng.chance(0.5)
    ? truncated(prng, route.bodyFields)
    : refused(Buffer.from(prng.pick(INVALID_JSON)), 'invalid json');
  return { ...body, what: `${body.what} (guarded)` };
}
