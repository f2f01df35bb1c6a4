import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CreateDatabaseDto, DomainError } from '@pgcloud/contracts';
import { IsString } from 'class-validator';
import { createValidationPipe, MAX_INPUT_DEPTH, nestsDeeperThan } from './validation.pipe.js';

class NameDto {
  @IsString()
  name!: string;
}

function nested(depth: number): unknown {
  let value: unknown = 'deep';
  for (let i = 0; i < depth; i++) value = i % 2 ? [value] : { a: value };
  return value;
}

describe('the validation pipe', () => {
  it('measures nesting without recursion, even far past the stack', () => {
    assert.equal(nestsDeeperThan({ a: [1, { b: 2 }] }, 3), false);
    assert.equal(nestsDeeperThan({ a: [1, { b: {} }] }, 3), true);
    assert.equal(nestsDeeperThan('flat', 0), false);
    assert.equal(nestsDeeperThan(nested(200_000), MAX_INPUT_DEPTH), true);
  });

  it('refuses a body nested thousands deep as VALIDATION_ERROR, not a stack overflow', async () => {
    const pipe = createValidationPipe();
    const metadata = { type: 'body', metatype: NameDto, data: undefined } as const;
    await assert.rejects(
      pipe.transform({ name: 'x', extra: nested(5000) }, metadata),
      (err: unknown) => err instanceof DomainError && err.code === 'VALIDATION_ERROR',
    );
    assert.deepEqual(
      await pipe.transform({ name: 'x' }, metadata),
      Object.assign(new NameDto(), { name: 'x' }),
    );
  });

  it('refuses a nested object given as an array, a string or a number, naming the field once', async () => {
    const pipe = createValidationPipe();
    const metadata = { type: 'body', metatype: CreateDatabaseDto, data: undefined } as const;
    for (const config of [[], [{ cpu: 1 }], 'big', 5, true]) {
      await assert.rejects(
        pipe.transform({ name: 'orders', config }, metadata),
        (err: unknown) =>
          err instanceof DomainError &&
          err.code === 'VALIDATION_ERROR' &&
          JSON.stringify(err.details) ===
            JSON.stringify([{ field: 'config', message: 'config must be an object' }]),
        JSON.stringify(config),
      );
    }
    const created = (await pipe.transform(
      { name: 'orders', config: { cpu: 0.5 } },
      metadata,
    )) as CreateDatabaseDto;
    // Only the parts given: the rest is the default of a create, or a branch's source's.
    assert.deepEqual({ ...created.config }, { cpu: 0.5 });
  });
});
