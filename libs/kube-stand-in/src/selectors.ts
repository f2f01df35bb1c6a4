import { badRequest } from './api-status.js';
import type { StoredObject } from './stored-object.js';

/** Whether an object is selected by a list's or a watch's selectors. */
export type ObjectFilter = (object: StoredObject) => boolean;

/**
 * A labelSelector: comma-separated requirements, all of which must hold: `a=b` (or `a==b`),
 * `a!=b`, `a` (the label exists), `!a`, `a in (x,y)`, `a notin (x,y)`. Anything else is a 400.
 */
export function labelFilter(selector: string | null): ObjectFilter {
  if (!selector?.trim()) return () => true;
  const requirements = splitRequirements(selector).map(labelRequirement);
  return (object) => {
    const labels = object.metadata.labels ?? {};
    return requirements.every((holds) => holds(labels));
  };
}

type Requirement = (labels: Record<string, string>) => boolean;

const NAME = '[A-Za-z0-9]([-A-Za-z0-9_./]*[A-Za-z0-9])?';
const VALUE = '([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?';
const EQUALITY = new RegExp(`^(${NAME})\\s*(==|=|!=)\\s*(${VALUE})$`);
const SET = new RegExp(`^(${NAME})\\s+(in|notin)\\s+\\(([^)]*)\\)$`);
const EXISTS = new RegExp(`^(!?)\\s*(${NAME})$`);

function labelRequirement(text: string): Requirement {
  const equality = EQUALITY.exec(text);
  if (equality) {
    const [, key, , operator, value] = equality;
    return operator === '!='
      ? (labels) => labels[key] !== value
      : (labels) => Object.hasOwn(labels, key) && labels[key] === value;
  }
  const set = SET.exec(text);
  if (set) {
    const [, key, , operator, list] = set;
    const values = list.split(',').map((v) => v.trim());
    return operator === 'in'
      ? (labels) => Object.hasOwn(labels, key) && values.includes(labels[key])
      : (labels) => !Object.hasOwn(labels, key) || !values.includes(labels[key]);
  }
  const exists = EXISTS.exec(text);
  if (exists) {
    const [, not, key] = exists;
    return (labels) => Object.hasOwn(labels, key) !== (not === '!');
  }
  throw badRequest(`unable to parse requirement: ${JSON.stringify(text)}`);
}

/** Splits on the commas outside parentheses. */
function splitRequirements(selector: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < selector.length; i++) {
    if (selector[i] === '(') depth++;
    else if (selector[i] === ')') depth--;
    else if (selector[i] === ',' && depth === 0) {
      parts.push(selector.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(selector.slice(start));
  return parts.map((part) => part.trim());
}

/**
 * A fieldSelector on `metadata.name` and `metadata.namespace` (`=`, `==`, `!=`): the fields
 * every kind supports. Other fields are a 400 here.
 */
export function fieldFilter(selector: string | null): ObjectFilter {
  if (!selector?.trim()) return () => true;
  const requirements = splitRequirements(selector).map((text) => {
    const match = /^(metadata\.name|metadata\.namespace)\s*(==|=|!=)\s*(.*)$/.exec(text);
    if (!match) throw badRequest(`field selector ${JSON.stringify(text)} is not served`);
    const [, field, operator, value] = match;
    const read = (object: StoredObject) =>
      field === 'metadata.name' ? object.metadata.name : (object.metadata.namespace ?? '');
    return operator === '!='
      ? (object: StoredObject) => read(object) !== value
      : (object: StoredObject) => read(object) === value;
  });
  return (object) => requirements.every((holds) => holds(object));
}
