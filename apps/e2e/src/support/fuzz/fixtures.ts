import type { CreatedBackup, Project } from '@pgcloud/contracts';
import type { SignedIn } from '@pgcloud/testing';
import type { Stack } from '@pgcloud/devstack';
import { signIn } from '@pgcloud/testing';
import { expectData } from '../assertions.js';
import { waitForBackup } from '../backups.js';
import { runningDatabase } from '../databases.js';
import { newClient, uniqueLogin } from '../../support/shared-stack.js';
import type { UserFixtures } from './send.js';
import { idBody } from './values.js';
import { Prng } from './prng.js';

/** A user signed in at a tier; Pro is set with the admin command, as an operator does. */
export async function fuzzUser(stack: Stack, tier: 'free' | 'pro'): Promise<SignedIn> {
  const anonymous = await newClient();
  const login = uniqueLogin(`fuzz-${tier}`);
  const first = await signIn(anonymous, login);
  if (tier === 'free') return first;
  await stack.runAdmin('auth-service', ['set-tier', login, 'pro']);
  return signIn(anonymous, login);
}

/**
 * The user's real things for the fuzz to aim at: one project, one running database (a
 * real server) and one completed backup. Restores have no fixture: a restore of the
 * database would be slow; a well-formed unknown restore id stands in.
 */
export async function userFixtures(user: SignedIn, tier: 'free' | 'pro'): Promise<UserFixtures> {
  const project = expectData<Project>(
    await user.api.post('/projects', { name: `fuzz-${tier}` }),
    201,
  );
  const databaseName = `fz-${tier}`;
  await runningDatabase(user.api, project.id, databaseName);
  const backupsPath = `/projects/${project.id}/databases/${databaseName}/backups`;
  const backup = expectData<CreatedBackup>(await user.api.post(backupsPath), 201);
  const done = await waitForBackup(user.api, backupsPath, backup.id);
  if (done.status !== 'completed') throw new Error(`fixture backup ${done.status}`);
  return {
    token: user.token,
    userId: user.user.id,
    projectId: project.id,
    databaseName,
    backupId: backup.id,
    restoreId: `rstr_${idBody(new Prng(Date.now()))}`,
  };
}
