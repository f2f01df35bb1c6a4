import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { RpcDef } from '@pgcloud/contracts';
import { ALL_PATTERNS, DomainError, SERVICE_NAMES, SERVICE_QUEUES } from '@pgcloud/contracts';
import type { Stack } from '@pgcloud/devstack';
import { getMetadataStorage } from 'class-validator';
import { sharedStack } from '../support/shared-stack.js';

/** The fields a declaration's request class names. */
function fieldsOf(def: RpcDef<object, unknown>): string[] {
  const rules = getMetadataStorage().getTargetValidationMetadatas(def.request, '', true, false);
  return [...new Set(rules.map((rule) => rule.propertyName))];
}

/** Messages no declaration allows: each service must refuse them all, and live on. */
function malformed(def: RpcDef<object, unknown>): [string, unknown][] {
  const fields = fieldsOf(def);
  const wrongTypes = Object.fromEntries(fields.map((field) => [field, { not: ['a value'] }]));
  return [
    ['an unknown field', { surprise: 1 }],
    ['a payload that is no object', 'text'],
    ['a payload that is a list', [1, 2]],
    ...(fields.length > 0
      ? [['every field of the wrong type', wrongTypes] as [string, unknown]]
      : []),
  ];
}

describe('every message pattern, sent malformed over the broker', () => {
  let stack: Stack;
  const clients = new Map<string, ReturnType<Stack['rawClient']>>();

  /** A client of the pattern's service, sending as the first app the pattern allows. */
  const clientOf = (def: RpcDef<object, unknown>): ReturnType<Stack['rawClient']> => {
    const sender = def.senders[0] ?? 'api-gateway';
    const key = `${def.service} ${sender}`;
    const client = clients.get(key) ?? stack.rawClient(def.service, 10_000, sender);
    clients.set(key, client);
    return client;
  };

  before(async () => {
    stack = await sharedStack();
  });

  after(async () => {
    await Promise.all([...clients.values()].map((client) => client.close()));
  });

  it('answers VALIDATION_ERROR to each, never another error, and logs the request id', async () => {
    let sent = 0;
    for (const def of ALL_PATTERNS) {
      for (const [what, payload] of malformed(def)) {
        const requestId = `malformed-${def.pattern}-${sent++}`;
        const ctx = { requestId, userId: 'user_aaaaaaaaaaaaaaaaaaaa', tier: 'free' as const };
        const answer = await clientOf(def)
          .send(def.pattern, ctx, payload)
          .then(
            () => undefined,
            (err: unknown) => err,
          );
        assert.ok(
          answer instanceof DomainError && answer.code === 'VALIDATION_ERROR',
          `${def.pattern} with ${what}: ${answer instanceof DomainError ? answer.code : String(answer)}`,
        );
      }
      // A context that is not one is refused the same way.
      const answer = await clientOf(def)
        .send(def.pattern, { requestId: 42 } as never, {})
        .catch((err: unknown) => err);
      assert.ok(answer instanceof DomainError && answer.code === 'VALIDATION_ERROR', def.pattern);
    }
    assert.ok(sent > 100, `${sent} malformed messages sent`);
    // Each service logged its refusals with the request id, and still answers.
    for (const service of SERVICE_NAMES) {
      const def = ALL_PATTERNS.find((d) => d.service === service)!;
      const refusals = stack
        .logRecords(SERVICE_QUEUES[service])
        .filter((r) => String(r.message).startsWith(`${def.pattern} refused:`));
      assert.ok(
        refusals.some((r) => r.request_id?.startsWith(`malformed-${def.pattern}-`)),
        `${service} logged a refusal of ${def.pattern} under its request id`,
      );
    }
    const health = await fetch(`${stack.baseUrl}/`);
    const body = (await health.json()) as { data: { status: string } };
    assert.equal(body.data.status, 'healthy');
  });
});
