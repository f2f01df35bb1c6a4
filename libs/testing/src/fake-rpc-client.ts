import type { RequestContext, RpcDef } from '@pgcloud/contracts';
import type { RpcClient } from '@pgcloud/messaging';

/** How a fake answers one pattern. */
export interface FakeAnswer {
  pattern: string;
  answer(payload: object, ctx: RequestContext): unknown;
}

/** A fake's answer to one declared pattern, typed by the declaration. */
export function answer<TRequest extends object, TResponse>(
  def: RpcDef<TRequest, TResponse>,
  fn: (payload: TRequest, ctx: RequestContext) => TResponse | Promise<TResponse>,
): FakeAnswer {
  return { pattern: def.pattern, answer: (payload, ctx) => fn(payload as TRequest, ctx) };
}

/**
 * An RpcClient for unit specs: each call goes to the answer given for its pattern; a call
 * nobody expected fails the spec.
 */
export function fakeRpcClient(...answers: FakeAnswer[]): RpcClient {
  const byPattern = new Map(answers.map((a) => [a.pattern, a]));
  const call = async (def: RpcDef<object, unknown>, ctx: RequestContext, payload: object) => {
    const found = byPattern.get(def.pattern);
    if (!found) throw new Error(`unexpected call to ${def.pattern}`);
    return await found.answer(payload, ctx);
  };
  return { call } as unknown as RpcClient;
}
