import { ValidationPipe } from '@nestjs/common';
import type { ValidationError } from 'class-validator';
import type { ErrorDetail } from '@pgcloud/contracts';
import { DomainError } from '@pgcloud/contracts';

/** Flattens class-validator's tree into `[{field, message}]`. */
export function validationDetails(errors: ValidationError[], parent = ''): ErrorDetail[] {
  return errors.flatMap((error) => {
    const field = parent ? `${parent}.${error.property}` : error.property;
    const own = Object.values(error.constraints ?? {}).map((message) => ({ field, message }));
    return [...own, ...validationDetails(error.children ?? [], field)];
  });
}

/**
 * The one validation pipe of pgcloud, used by the gateway on HTTP input and by every
 * service on messages: unknown fields are refused, failures become VALIDATION_ERROR.
 */
export function createValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    transform: true,
    whitelist: true,
    forbidNonWhitelisted: true,
    forbidUnknownValues: false,
    exceptionFactory: (errors) =>
      new DomainError('VALIDATION_ERROR', 'The request is not valid.', validationDetails(errors)),
  });
}
