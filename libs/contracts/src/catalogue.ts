import type { AppName, ServiceName } from './context.js';

/** A class whose instances a message's body is validated into (class-validator rules). */
export type MessageClass<T> = new () => T;

/**
 * One request-response pattern: the service that answers it, its name on the broker, the
 * class its request is validated against, the apps that may send it, and (as a type only)
 * what it answers.
 */
export interface RpcDef<TRequest extends object, TResponse> {
  readonly service: ServiceName;
  readonly pattern: string;
  readonly request: MessageClass<TRequest>;
  /**
   * The apps whose broker logins may send it; the service refuses anyone else before
   * reading the message (docs/operating.md#between-the-services).
   */
  readonly senders: readonly AppName[];
  /** Never set: carries the answer's type to the client. */
  readonly response?: TResponse;
}

/** The senders of a pattern the API serves: the gateway alone. */
export const FROM_GATEWAY: readonly AppName[] = ['api-gateway'];

/**
 * Declares a pattern: `rpc<DatabaseRefDto, Database>('databases', 'databases.get',
 * DatabaseRefDto, ['api-gateway', 'backup-service'])`; the gateway alone sends it unless
 * `senders` says otherwise.
 */
export function rpc<TRequest extends object, TResponse>(
  service: ServiceName,
  pattern: string,
  request: MessageClass<TRequest>,
  senders: readonly AppName[] = FROM_GATEWAY,
): RpcDef<TRequest, TResponse> {
  return { service, pattern, request, senders };
}

/**
 * One domain event: its name (the routing key), the class its payload is validated against
 * and the app that publishes it (subscribers drop it from anyone else).
 */
export interface EventDef<TPayload extends object> {
  readonly name: string;
  readonly payload: MessageClass<TPayload>;
  readonly publisher: AppName;
}

/** Declares an event: `event('database.deleted', DatabaseEvent, 'database-provisioner')`. */
export function event<TPayload extends object>(
  name: string,
  payload: MessageClass<TPayload>,
  publisher: AppName,
): EventDef<TPayload> {
  return { name, payload, publisher };
}

/** The request type of a pattern. */
export type RequestOf<D> = D extends RpcDef<infer R, unknown> ? R : never;

/** The answer type of a pattern. */
export type ResponseOf<D> = D extends RpcDef<object, infer R> ? R : never;

/** A request with no fields. */
export class EmptyDto {}
