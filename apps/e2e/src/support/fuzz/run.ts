import { setTimeout as delay } from 'node:timers/promises';
import type { Change } from './judge.js';
import { judge } from './judge.js';
import type { Caller, PlannedRequest } from './plan.js';
import type { UserFixtures } from './send.js';
import { headersOf, pathOf, sendRaw } from './send.js';

/** What a fuzz run saw. */
export interface FuzzOutcome {
  requests: number;
  byStatus: Map<number, number>;
  serverErrors: number;
  failures: string[];
  changes: { caller: Caller; change: Change }[];
}

/**
 * A client-side bucket that keeps one caller under its tier's limit, so the fuzz meets the
 * validation, not a wall of 429 (which would still be a valid answer).
 */
class Pace {
  private tokens: number;
  private last = Date.now();

  constructor(
    private readonly burst: number,
    private readonly perSecond: number,
  ) {
    this.tokens = burst;
  }

  async take(): Promise<void> {
    for (;;) {
      const now = Date.now();
      this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.perSecond);
      this.last = now;
      if (this.tokens >= 1) {
        this.tokens -= 1;
        return;
      }
      await delay(Math.ceil(((1 - this.tokens) / this.perSecond) * 1000));
    }
  }
}

/** The addresses the fuzz's requests come from: many, so no IP bucket runs dry. */
function clientIpOf(index: number): string {
  return `192.0.2.${1 + (index % 200)}`;
}

/** Sends the plan with a few requests in flight at once and judges every answer. */
export async function runPlan(
  baseUrl: string,
  plan: PlannedRequest[],
  users: Record<'free' | 'pro', UserFixtures>,
  concurrency = 4,
): Promise<FuzzOutcome> {
  const outcome: FuzzOutcome = {
    requests: 0,
    byStatus: new Map(),
    serverErrors: 0,
    failures: [],
    changes: [],
  };
  // Pro's default bucket is 1000 a minute with a burst of 100: stay well inside it.
  const pro = new Pace(80, 14);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < plan.length) {
      const request = plan[next++];
      if (request.caller === 'pro') await pro.take();
      await sendOne(baseUrl, request, users, outcome);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return outcome;
}

async function sendOne(
  baseUrl: string,
  request: PlannedRequest,
  users: Record<'free' | 'pro', UserFixtures>,
  outcome: FuzzOutcome,
): Promise<void> {
  const own = request.caller === 'pro' ? users.pro : users.free;
  const foreign = request.caller === 'pro' ? users.free : users.pro;
  const path = pathOf(request, own, foreign);
  const token = request.caller === 'anonymous' ? undefined : own.token;
  const headers = headersOf(request, request.caller, token, clientIpOf(request.index));
  const label = `#${request.index} ${request.caller} ${request.method} ${path.slice(0, 160)} [${request.body.what}]`;
  outcome.requests += 1;
  try {
    const answer = await sendRaw(baseUrl, request.method, path, headers, request.body.bytes);
    outcome.byStatus.set(answer.status, (outcome.byStatus.get(answer.status) ?? 0) + 1);
    if (answer.status >= 500) outcome.serverErrors += 1;
    const verdict = judge(request, path, answer);
    if (verdict.problems.length > 0)
      outcome.failures.push(`${label} -> ${answer.status}: ${verdict.problems.join('; ')}`);
    if (verdict.change) outcome.changes.push({ caller: request.caller, change: verdict.change });
  } catch (err) {
    outcome.failures.push(`${label} -> no answer: ${String(err)}`);
  }
}
