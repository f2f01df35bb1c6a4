import type { AppName, EventDef, RequestContext } from '@pgcloud/contracts';
import { MAX_INPUT_DEPTH, nestsDeeperThan, validationDetails } from '@pgcloud/http';
import type { ConsumeMessage } from 'amqplib';
import { plainToInstance } from 'class-transformer';
import { validate } from 'class-validator';

/** A delivery read and validated: its id, name, the request it came from and its payload. */
export interface ValidEvent {
  eventId: string;
  event: string;
  ctx: RequestContext;
  payload: object;
  /** When it happened: the envelope's `at`, or when it was read if that is missing. */
  at: Date;
}

/** A delivery that is dropped, with what is known of it for the log. */
export interface InvalidEvent {
  invalid: string;
  eventId?: string;
  event?: string;
  requestId?: string;
}

/**
 * Reads a delivery of the events exchange: sent by the broker login of the event's
 * publisher (its `user-id`, which the broker vouches for; `users` tells the app of each
 * login), JSON with the event's name (its routing key), a request id and a payload that
 * its declaration's class accepts, unknown fields refused. `declared` finds the
 * declaration of a name this consumer handles.
 */
export async function readEvent(
  message: ConsumeMessage,
  declared: (name: string) => EventDef<object> | undefined,
  users: ReadonlyMap<string, AppName>,
): Promise<ValidEvent | InvalidEvent> {
  const event = message.fields.routingKey;
  const eventId = message.properties.messageId as unknown;
  const def = declared(event);
  const sender = message.properties.userId as unknown;
  const login = typeof sender === 'string' && sender !== '' ? sender : undefined;
  if (def && (login === undefined || users.get(login) !== def.publisher))
    return {
      invalid: `sent by broker login ${login ?? 'none'}, not by ${def.publisher}`,
      event,
      ...(typeof eventId === 'string' && eventId !== '' ? { eventId } : {}),
    };
  let body: unknown;
  try {
    body = JSON.parse(message.content.toString('utf8'));
  } catch {
    return { invalid: 'not JSON', event };
  }
  const envelope = isObject(body) ? body : {};
  const requestId = typeof envelope['request_id'] === 'string' ? envelope['request_id'] : undefined;
  const known = { event, ...(requestId === undefined ? {} : { requestId }) };
  if (typeof eventId !== 'string' || eventId === '') return { invalid: 'no message id', ...known };
  const withId = { ...known, eventId };
  if (requestId === undefined) return { invalid: 'no request_id', ...withId };
  if (envelope['event'] !== event)
    return { invalid: `named ${String(envelope['event'])}, routed as ${event}`, ...withId };
  if (!def) return { invalid: 'not an event this service handles', ...withId };
  const raw = envelope['payload'];
  if (!isObject(raw) || nestsDeeperThan(raw, MAX_INPUT_DEPTH))
    return { invalid: 'the payload is not a flat enough object', ...withId };
  const payload = plainToInstance(def.payload, raw);
  const errors = await validate(payload, {
    whitelist: true,
    forbidNonWhitelisted: true,
    forbidUnknownValues: true,
  });
  if (errors.length > 0) {
    const details = validationDetails(errors).map((d) => `${d.field}: ${d.message}`);
    return { invalid: `invalid payload (${details.join('; ')})`, ...withId };
  }
  const at = typeof envelope['at'] === 'string' ? new Date(envelope['at']) : new Date(NaN);
  return {
    eventId,
    event,
    ctx: { requestId },
    payload,
    at: Number.isNaN(at.getTime()) ? new Date() : at,
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
