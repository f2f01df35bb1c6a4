import { performance } from 'node:perf_hooks';
import { setTimeout as delay } from 'node:timers/promises';
import type { Client } from '@pgcloud/api-client';
import {
  createDatabase,
  deleteDatabase,
  getDatabase,
  listDatabases,
  unwrap,
} from '@pgcloud/api-client';
import type { ApiClient, SignedIn } from '@pgcloud/testing';
import type { Stack } from '@pgcloud/devstack';
import { signIn } from '@pgcloud/testing';

/** How often a new database's status is read. */
export const POLL_MS = 25;
/** A database still not running after this has failed in all but name: stop the bench. */
const READY_TIMEOUT_MS = 120_000;

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

/** Milliseconds from sending the create to the answer that reads `running`. */
export async function timeCreate(
  client: Client,
  project_id: string,
  name: string,
): Promise<number> {
  const started = performance.now();
  await unwrap(createDatabase({ client, path: { project_id }, body: { name } }));
  const deadline = started + READY_TIMEOUT_MS;
  for (;;) {
    const { status, error } = await unwrap(getDatabase({ client, path: { project_id, name } }));
    const answered = performance.now();
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
export async function deleteDatabases(client: Client, project_id: string): Promise<void> {
  const { databases } = await unwrap(listDatabases({ client, path: { project_id } }));
  for (const { name } of databases)
    await unwrap(deleteDatabase({ client, path: { project_id, name } }));
}
