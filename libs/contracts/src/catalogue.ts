import type { ServiceName } from './context.js';

/** A class whose instances a message's body is validated into (class-validator rules). */
export type MessageClass<T> = new () => T;

/**
 * One request-response pattern: the service that answers it, its name on the broker, the
 * class its request is validated against, and (as a type only) what it answers.
 */
export interface RpcDef<TRequest extends object, TResponse> {
  readonly service: ServiceName;
  readonly pattern: string;
  readonly request: MessageClass<TRequest>;
  /** Never set: carries the answer's type to the client. */
  readonly response?: TResponse;
}

/** Declares a pattern: `rpc<DatabaseRefDto, Database>('databases', 'databases.get', DatabaseRefDto)`. */
export function rpc<TRequest extends object, TResponse>(
  service: ServiceName,
  pattern: string,
  request: MessageClass<TRequest>,
): RpcDef<TRequest, TResponse> {
  return { service, pattern, request };
}

/** One domain event: its name (the routing key) and the class its payload is validated against. */
export interface EventDef<TPayload extends object> {
  readonly name: string;
  readonly payload: MessageClass<TPayload>;
}

/** Declares an event: `event('database.deleted', DatabaseDeletedEvent)`. */
export function event<TPayload extends object>(
  name: string,
  payload: MessageClass<TPayload>,
): EventDef<TPayload> {
  return { name, payload };
}

/** The request type of a pattern. */
export type RequestOf<D> = D extends RpcDef<infer R, unknown> ? R : never;

/** The answer type of a pattern. */
export type ResponseOf<D> = D extends RpcDef<object, infer R> ? R : never;

/** A request with no fields. */
export class EmptyDto {}
