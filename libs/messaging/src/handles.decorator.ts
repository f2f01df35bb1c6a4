import { applyDecorators, SetMetadata } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import type { RpcDef } from '@pgcloud/contracts';

/** What a handler answers: a catalogue pattern (its service does not matter here). */
export type HandledPattern = Pick<RpcDef<object, unknown>, 'pattern' | 'request' | 'senders'>;

/** Metadata key under which a handler keeps the pattern it answers. */
export const HANDLED_PATTERN = 'pgcloud:handled-pattern';

const BODY_INDEX = 'pgcloud:message-body-index';

/**
 * The payload part of a Message, as MessageValidationInterceptor validated it against the
 * pattern's request class. Its declared type must be that class (Handles checks).
 */
export const MessageBody =
  (): ParameterDecorator =>
  (target, key, index): void => {
    Payload('payload')(target, key, index);
    if (key !== undefined) Reflect.defineMetadata(BODY_INDEX, index, target, key);
  };

/** The RequestContext part of a Message. */
export const MessageCtx = (): ParameterDecorator => Payload('ctx');

/**
 * Answers one catalogue pattern. Every message is validated against the pattern's request
 * class before the handler runs (MessageValidationInterceptor); a handler whose
 * @MessageBody() is declared as any other type is refused when its class is defined, so
 * the type the handler reads is always what was checked.
 */
export function Handles(def: HandledPattern): MethodDecorator {
  const check: MethodDecorator = (target, key) => {
    const index = Reflect.getMetadata(BODY_INDEX, target, key) as number | undefined;
    if (index === undefined) return;
    const types = Reflect.getMetadata('design:paramtypes', target, key) as unknown[] | undefined;
    if (types?.[index] !== def.request)
      throw new Error(
        `${target.constructor.name}.${String(key)} answers ${def.pattern}: its @MessageBody() ` +
          `must be declared as ${def.request.name}`,
      );
  };
  return applyDecorators(check, SetMetadata(HANDLED_PATTERN, def), MessagePattern(def.pattern));
}
