import { performance } from 'node:perf_hooks';
import { setTimeout as delay } from 'node:timers/promises';
import type { Database, Project } from '@pgcloud/contracts';
import type { ApiClient, ApiResponse, SignedIn, Stack, SuccessBody } from '@pgcloud/testing';
import { signIn } from '@pgcloud/testing';

/** How often a new database's status is read. */
export const POLL_MS = 25;
/** A database still not running after this has failed in all but name: stop the bench. */
const READY_TIMEOUT_MS = 120_000;

function expectStatus(response: ApiResponse<unknown>, status: number, what: string): void {
  if (response.status !== status)
    throw new Error(`${what} answered ${response.status}: ${JSON.stringify(response.body)}`);
}

/**
 * Signs in as a Pro user: Free allows 3 databases per project, and its rate limit would
 * throttle the polling. The tier is set by the operator's command, and a second sign-in
 * hands out a token that is checked afresh, with the new tier.
 */
export async function signInPro(stack: Stack, api: ApiClient, login: string): Promise<SignedIn> {
  await signIn(api, login);
  await stack.runAdmin('auth-service', ['set-tier', login, 'pro']);
  return signIn(api, login);
}

/** Creates a project and answers its id. */
export async function createProject(api: ApiClient, name: string): Promise<string> {
  const created = await api.post<SuccessBody<Project>>('/projects', { name });
  expectStatus(created, 201, 'POST /projects');
  return created.body.data.id;
}

/** Milliseconds from sending the create to the answer that reads `running`. */
export async function timeCreate(api: ApiClient, projectId: string, name: string): Promise<number> {
  const path = `/projects/${projectId}/databases`;
  const started = performance.now();
  const created = await api.post<SuccessBody<Database>>(path, { name });
  expectStatus(created, 201, `POST ${path}`);
  const deadline = started + READY_TIMEOUT_MS;
  for (;;) {
    const shown = await api.get<SuccessBody<Database>>(`${path}/${name}`);
    const answered = performance.now();
    expectStatus(shown, 200, `GET ${path}/${name}`);
    const { status, error } = shown.body.data;
    if (status === 'running') return answered - started;
    if (status === 'failed') throw new Error(`database ${name} failed: ${error ?? 'no reason'}`);
    if (answered > deadline)
      throw new Error(`database ${name} is still ${status} after ${READY_TIMEOUT_MS / 1000} s`);
    await delay(POLL_MS);
  }
}

/**
 * Deletes every database of the project, whichever came up; their servers go in the
 * background, and Stack.stop stops any the provisioner has not removed by then.
 */
export async function deleteDatabases(api: ApiClient, projectId: string): Promise<void> {
  const path = `/projects/${projectId}/databases`;
  const listed = await api.get<SuccessBody<{ databases: Database[] }>>(path);
  expectStatus(listed, 200, `GET ${path}`);
  for (const { name } of listed.body.data.databases)
    expectStatus(await api.delete(`${path}/${name}`), 200, `DELETE ${path}/${name}`);
}
