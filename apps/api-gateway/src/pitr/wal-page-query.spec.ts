import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ArgumentMetadata } from '@nestjs/common';
import { DomainError, EnablePitrDto, WalPageQueryDto } from '@pgcloud/contracts';
import { createValidationPipe } from '@pgcloud/http';

const pipe = createValidationPipe();
const QUERY: ArgumentMetadata = { type: 'query', metatype: WalPageQueryDto };
const BODY: ArgumentMetadata = { type: 'body', metatype: EnablePitrDto };

/** What the gateway's pipe makes of an input: the value, or the fields it refused. */
async function through(input: object, metadata: ArgumentMetadata): Promise<unknown> {
  try {
    const value: unknown = await pipe.transform(input, metadata);
    // A plain copy: deepEqual compares prototypes, and the pipe answers DTO instances.
    return { value: { ...(value as object) } };
  } catch (err) {
    assert.ok(err instanceof DomainError, String(err));
    assert.equal(err.code, 'VALIDATION_ERROR');
    return { refused: [...new Set(err.details?.map((detail) => detail.field))] };
  }
}

describe("GET .../pitr/wal's query, through the gateway's validation pipe", () => {
  it('turns a query-string limit into a number, and takes a cursor', async () => {
    assert.deepEqual(await through({ limit: '5' }, QUERY), { value: { limit: 5 } });
    assert.deepEqual(await through({ limit: '1000', cursor: '000000010000000000000003' }, QUERY), {
      value: { limit: 1000, cursor: '000000010000000000000003' },
    });
    assert.deepEqual(await through({}, QUERY), { value: {} });
  });

  it('refuses a limit that is not an integer from 1 to 1000', async () => {
    for (const limit of ['abc', '0', '-1', '1001', '2.5', '', ['5', '6']])
      assert.deepEqual(await through({ limit }, QUERY), { refused: ['limit'] }, String(limit));
  });

  it('refuses a repeated cursor and unknown parameters', async () => {
    assert.deepEqual(await through({ cursor: ['a', 'b'] }, QUERY), { refused: ['cursor'] });
    assert.deepEqual(await through({ page: '2' }, QUERY), { refused: ['page'] });
  });
});

describe("POST .../pitr/enable's body, through the gateway's validation pipe", () => {
  it('takes an integer retention_days from 1 to 35', async () => {
    for (const days of [1, 7, 35])
      assert.deepEqual(await through({ retention_days: days }, BODY), {
        value: { retention_days: days },
      });
  });

  it('refuses anything else, a string of digits included', async () => {
    for (const body of [{}, { retention_days: 0 }, { retention_days: 36 }, { retention_days: 2.5 }])
      assert.deepEqual(
        await through(body, BODY),
        { refused: ['retention_days'] },
        JSON.stringify(body),
      );
    assert.deepEqual(await through({ retention_days: '7' }, BODY), { refused: ['retention_days'] });
  });
});
