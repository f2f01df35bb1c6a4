import type { TestContext } from 'node:test';
import { CommanderError } from 'commander';
import { buildProgram } from '../program.js';

/** The project every spec runs in. */
export const PROJECT = 'proj_k3v9x0q2m8t4b7w1c5zd';

/** One request the fake API saw. */
export interface SeenRequest {
  method: string;
  url: URL;
  body: unknown;
}

/**
 * A route handler: what the fake API answers (an envelope's data, or a whole Response),
 * undefined when it does not serve this request.
 */
export type FakeRoute = (request: SeenRequest) => unknown;

/**
 * Runs `pgcloud ARGS` (with --project unless the command is of the account, PGCLOUD_TOKEN
 * and a fake API URL) against fake fetch
 * answers: each request goes to the first route that answers it, data in an envelope
 * unless the route answers a Response. Answers what was printed, asked and the exit code.
 */
export async function runCli(
  t: TestContext,
  args: string[],
  routes: FakeRoute[],
  scope: 'project' | 'account' = 'project',
) {
  const requests: SeenRequest[] = [];
  t.mock.method(globalThis, 'fetch', async (input: Request | string) => {
    const request = typeof input === 'string' ? new Request(input) : input;
    const text = await request.text();
    const seen = {
      method: request.method,
      url: new URL(request.url),
      body: text ? (JSON.parse(text) as unknown) : undefined,
    };
    requests.push(seen);
    for (const route of routes) {
      const answer = route(seen);
      if (answer === undefined) continue;
      if (answer instanceof Response) return answer;
      return new Response(JSON.stringify({ success: true, data: answer }), {
        status: request.method === 'POST' ? 201 : 200,
        headers: { 'content-type': 'application/json' },
      });
    }
    return new Response(
      JSON.stringify({ success: false, error: { code: 'NOT_FOUND', message: 'no route' } }),
      { status: 404, headers: { 'content-type': 'application/json' } },
    );
  });
  const stdout = capture(t, process.stdout);
  const stderr = capture(t, process.stderr);
  process.env['PGCLOUD_TOKEN'] = 't';
  try {
    const project = scope === 'project' ? ['--project', PROJECT] : [];
    await buildProgram().parseAsync([...args, ...project, '--api-url', 'http://api.test'], {
      from: 'user',
    });
  } catch (error) {
    if (!(error instanceof CommanderError)) throw error;
    process.exitCode = error.exitCode === 0 ? 0 : 2;
  } finally {
    delete process.env['PGCLOUD_TOKEN'];
    stdout.restore();
    stderr.restore();
  }
  const exitCode = process.exitCode;
  process.exitCode = undefined;
  return { requests, stdout: stdout.text(), stderr: stderr.text(), exitCode };
}

/** A route answering `method` on paths ending in `suffix` with the next of `answers`. */
export function route(method: string, suffix: string, ...answers: unknown[]): FakeRoute {
  return (request) => {
    if (request.method !== method || !request.url.pathname.endsWith(suffix)) return undefined;
    return answers.length > 1 ? answers.shift() : answers[0];
  };
}

/**
 * Captures what the command line writes (strings); the test runner's own messages to its
 * parent (buffers) pass on.
 */
function capture(t: TestContext, stream: NodeJS.WriteStream) {
  const written: string[] = [];
  const original = stream.write.bind(stream) as (...args: unknown[]) => boolean;
  const mock = t.mock.method(stream, 'write', (chunk: unknown, ...rest: unknown[]) => {
    if (typeof chunk !== 'string') return original(chunk, ...rest);
    written.push(chunk);
    return true;
  });
  return { text: () => written.join(''), restore: () => mock.mock.restore() };
}
