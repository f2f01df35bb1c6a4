import { Transform } from 'class-transformer';
import { IsBoolean, IsNotEmpty, IsOptional, IsString, Matches } from 'class-validator';
import type { ValidationOptions } from 'class-validator';
import type { IdPrefix } from './ids.js';
import { idPattern } from './ids.js';

/** Applies several property decorators as one. */
function all(...rules: PropertyDecorator[]): PropertyDecorator {
  return (target, property) => rules.forEach((rule) => rule(target, property));
}

/**
 * A name or id the user gave in a path, passed on as it came: a non-empty string. Its
 * form is checked where it is looked up, because a malformed path id answers the
 * resource's NOT_FOUND, not VALIDATION_ERROR (docs/api/errors.md#ids).
 */
export function IsRef(): PropertyDecorator {
  return all(IsString(), IsNotEmpty());
}

/** An id a service made and passes on (`db_...`, `bkp_...`): it must have the id's form. */
export function IsIdOf(prefix: IdPrefix, options?: ValidationOptions): PropertyDecorator {
  return Matches(idPattern(prefix), {
    message: `$property must be a ${prefix}_ id`,
    ...options,
  });
}

/** An optional query flag, `true` or `false` as the query string spells it. */
export function IsQueryFlag(): PropertyDecorator {
  return all(
    IsOptional(),
    Transform(({ value }: { value: unknown }) =>
      value === 'true' ? true : value === 'false' ? false : value,
    ),
    IsBoolean({ message: '$property must be true or false' }),
  );
}
