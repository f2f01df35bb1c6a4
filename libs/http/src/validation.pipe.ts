import type { ArgumentMetadata } from '@nestjs/common';
import { ValidationPipe } from '@nestjs/common';
import type { ValidationError } from 'class-validator';
import type { ErrorDetail } from '@pgcloud/contracts';
import { DomainError } from '@pgcloud/contracts';

/** Flattens class-validator's tree into `[{field, message}]`, each message of a field once. */
export function validationDetails(errors: ValidationError[], parent = ''): ErrorDetail[] {
  return errors.flatMap((error) => {
    const field = parent ? `${parent}.${error.property}` : error.property;
    const messages = new Set(Object.values(error.constraints ?? {}));
    const own = [...messages].map((message) => ({ field, message }));
    return [...own, ...validationDetails(error.children ?? [], field)];
  });
}

/** Deeper than any DTO of pgcloud nests; far shallower than what overflows the stack. */
export const MAX_INPUT_DEPTH = 32;

/** True when `value` nests objects or arrays deeper than `limit`; walks without recursion. */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  const pending: [unknown, number][] = [[value, 0]];
  while (pending.length > 0) {
    const [item, depth] = pending.pop()!;
    if (typeof item !== 'object' || item === null) continue;
    if (depth >= limit) return true;
    for (const child of Object.values(item)) pending.push([child, depth + 1]);
  }
  return false;
}

/**
 * class-transformer walks its input recursively: a JSON body of a few thousand nested
 * arrays, well under the body limit, overflowed the stack (500). Such input is refused
 * as malformed before it is transformed.
 */
class DepthCheckingValidationPipe extends ValidationPipe {
  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if (nestsDeeperThan(value, MAX_INPUT_DEPTH))
      throw new DomainError('VALIDATION_ERROR', 'The request is not valid.', [
        {
          field: metadata.data ?? metadata.type,
          message: `nests deeper than ${MAX_INPUT_DEPTH} levels`,
        },
      ]);
    return super.transform(value, metadata) as Promise<unknown>;
  }
}

/**
 * The one validation pipe of pgcloud, used by the gateway on HTTP input and by every
 * service on messages: unknown fields are refused, input nested beyond MAX_INPUT_DEPTH
 * too, and failures become VALIDATION_ERROR.
 */
export function createValidationPipe(): ValidationPipe {
  return new DepthCheckingValidationPipe({
    transform: true,
    whitelist: true,
    forbidNonWhitelisted: true,
    forbidUnknownValues: false,
    exceptionFactory: (errors) =>
      new DomainError('VALIDATION_ERROR', 'The request is not valid.', validationDetails(errors)),
  });
}
