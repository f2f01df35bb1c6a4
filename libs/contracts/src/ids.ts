import { randomInt } from 'node:crypto';

/** The type prefixes of pgcloud ids. */
export type IdPrefix =
  'user' | 'proj' | 'db' | 'srv' | 'bkp' | 'rstr' | 'drl' | 'dev' | 'tok' | 'whk' | 'msg' | 'dlv';

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';
const ID_BODY_LENGTH = 20;

/** A new id: the prefix, an underscore and 20 random characters of [0-9a-z]. */
export function newId(prefix: IdPrefix): string {
  let body = '';
  for (let i = 0; i < ID_BODY_LENGTH; i++) body += ALPHABET[randomInt(ALPHABET.length)];
  return `${prefix}_${body}`;
}

/** The form of an id of that prefix. */
export function idPattern(prefix: IdPrefix): RegExp {
  return new RegExp(`^${prefix}_[0-9a-z]{${ID_BODY_LENGTH}}$`);
}

/** True when the value is a well-formed id of that prefix. */
export function isId(prefix: IdPrefix, value: string): boolean {
  return idPattern(prefix).test(value);
}

/** An id's example and form, as the answers' OpenAPI schemas show it. */
export function idSchema(prefix: IdPrefix): { example: string; pattern: string } {
  return { example: `${prefix}_k3v9x0q2m8t4b7w1c5zd`, pattern: idPattern(prefix).source };
}
