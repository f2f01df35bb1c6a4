import type { FuzzBody } from './bodies.js';
import { fuzzBody, unreadableBody } from './bodies.js';
import type { Prng } from './prng.js';
import type { FuzzRoute } from './routes.js';
import { badPathSegment, badQueryValue, idBody, unknownQuery } from './values.js';

/** Who sends a request. */
export type Caller = 'free' | 'pro' | 'anonymous';
export const CALLERS: readonly Caller[] = ['free', 'pro', 'anonymous'];

/** A path parameter: the caller's own fixture, the other user's, or a literal segment. */
export type ParamValue = { kind: 'own' } | { kind: 'foreign' } | { kind: 'literal'; raw: string };

/** One request of the plan; ids of fixtures are filled in when it is sent. */
export interface PlannedRequest {
  index: number;
  caller: Caller;
  route: FuzzRoute;
  method: string;
  params: Record<string, ParamValue>;
  /** Percent-encoded query string without `?`, or ''. */
  query: string;
  /** An Authorization header other than the caller's own token, or null for none. */
  authorization?: string | null;
  requestId?: string;
  body: FuzzBody;
}

/** Methods Node's HTTP parser knows, so the request reaches the gateway. */
const ODD_METHODS = [
  'PUT',
  'PATCH',
  'OPTIONS',
  'HEAD',
  'PROPFIND',
  'PURGE',
  'SEARCH',
  'GET',
  'POST',
  'DELETE',
];

/**
 * Routes that change something or start real work (a server, a backup, a restore, PITR)
 * when given the caller's real ids: such requests always carry a body that the gateway
 * surely refuses, so the fuzz never deletes its fixtures or starts a server. Creating a
 * project is cheap and stays possible, to check the bookkeeping of what got created.
 */
export function changesState(method: string, path: string): boolean {
  if (method === 'GET' || method === 'HEAD' || method === 'OPTIONS') return false;
  if (path === '/projects' || path.startsWith('/auth/device') || path === '/device') return false;
  return path !== '/' && !path.endsWith('/pitr/disable');
}

function paramValue(prng: Prng, param: string): ParamValue {
  const roll = prng.next();
  if (roll < 0.45) return { kind: 'own' };
  if (roll < 0.6) return { kind: 'foreign' };
  return { kind: 'literal', raw: badPathSegment(prng, param) };
}

function queryOf(prng: Prng, route: FuzzRoute): string {
  const parts: string[] = [];
  for (const param of route.queryParams) {
    if (prng.chance(0.6)) parts.push(badQueryValue(prng, param.name, param.type));
  }
  if (prng.chance(0.25)) parts.push(unknownQuery(prng));
  return parts.join('&');
}

function anonymousAuthorization(prng: Prng): string | null {
  return prng.pick([
    null,
    null,
    'Bearer',
    'Bearer ',
    `Bearer pgc_${idBody(prng, 40)}`,
    `bearer pgc_${idBody(prng, 40)}`,
    `Bearer  pgc_${idBody(prng, 40)}`,
    `Bearer proj_${idBody(prng)}`,
    'Basic dXNlcjpwYXNz',
    `Bearer ${'A'.repeat(6000)}`,
    'Bearer pgc_\u00ff\u00fe',
    'Bearer null',
  ]);
}

/** One planned request of `caller` to `route`. */
export function planRequest(
  prng: Prng,
  caller: Caller,
  route: FuzzRoute,
  index: number,
): PlannedRequest {
  const params: Record<string, ParamValue> = {};
  for (const param of route.pathParams) params[param] = paramValue(prng, param);
  const method = prng.chance(0.8) ? route.method : prng.pick(ODD_METHODS);
  const request: PlannedRequest = {
    index,
    caller,
    route,
    method,
    params,
    query: queryOf(prng, route),
    body:
      route.bodyType || prng.chance(0.3)
        ? fuzzBody(prng, route)
        : { what: 'no body', surelyRefused: false },
  };
  if (caller === 'anonymous') request.authorization = anonymousAuthorization(prng);
  else if (prng.chance(0.05)) request.authorization = anonymousAuthorization(prng);
  if (prng.chance(0.05))
    request.requestId = prng.pick(['', 'x'.repeat(300), 'a b', '\u00ff', '../x']);
  const ownOnly = Object.values(params).every((value) => value.kind === 'own');
  if (
    caller !== 'anonymous' &&
    ownOnly &&
    changesState(method, route.path) &&
    !request.body.surelyRefused
  )
    request.body = unreadableBody(prng, route);
  return request;
}

/** The whole plan: `perRoute` requests of each caller to each route, shuffled. */
export function planFuzz(prng: Prng, routes: FuzzRoute[], perRoute: number): PlannedRequest[] {
  const plan: PlannedRequest[] = [];
  for (const route of routes) {
    for (const caller of CALLERS) {
      for (let i = 0; i < perRoute; i++) plan.push(planRequest(prng, caller, route, plan.length));
    }
  }
  for (let i = plan.length - 1; i > 0; i--) {
    const j = prng.int(i + 1);
    [plan[i], plan[j]] = [plan[j], plan[i]];
  }
  return plan;
}
