import type { OsUser } from '@pgcloud/postgres';
import {
  ensureCertificateAuthority,
  pgBinDir,
  resolveOsUser,
  withSuperuser,
} from '@pgcloud/postgres';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CnpgServerProcess } from './cnpg-server.js';
import { clusterG1, lookup, makeSecrets } from './cnpg-server.int-fixtures.js';

const root = join(tmpdir(), 'pgcloud-test-cnpg-replica', randomBytes(4).toString('hex'));

/** g1 with a hold: `spec.replica` naming an external cluster that does not exist. */
function held(enabled: boolean) {
  const base = clusterG1({});
  const hold = {
    name: 'pgcloud-hold',
    connectionParameters: { host: 'pgcloud-hold.invalid', port: '5432', dbname: 'postgres' },
  };
  return {
    ...base,
    spec: {
      ...base.spec,
      externalClusters: [hold],
      replica: { enabled, source: 'pgcloud-hold' },
    },
  };
}

describe('CnpgServerProcess: spec.replica demotes and promotes (real PostgreSQL)', () => {
  let osUser: OsUser;
  let server: CnpgServerProcess | undefined;

  const sql = (text: string) =>
    withSuperuser(server?.address ?? { socketDir: '', port: 0 }, 5000, async (client) => {
      const { rows } = await client.query<{ v: unknown }>(text);
      return rows[0]?.v;
    });
  const sqlState = (text: string) =>
    sql(text).then(
      () => 'done',
      (err: { code?: string }) => err.code ?? 'error',
    );

  before(async () => {
    await mkdir(root, { recursive: true });
    osUser = await resolveOsUser(process.env.PG_OS_USER ?? 'postgres');
    await makeSecrets(await ensureCertificateAuthority(join(root, 'ca')), root, osUser);
  });

  after(async () => {
    await server?.destroy().catch(() => undefined);
    await rm(root, { recursive: true, force: true });
  });

  it('a held primary becomes a standby: reads go on, writes are refused', async () => {
    const options = { dataRoot: join(root, 'servers'), binDir: pgBinDir(), osUser };
    server = await CnpgServerProcess.start(held(false), lookup, options);
    assert.equal(server.standby, false);
    await sql('CREATE TABLE public.kept (n int)');
    await sql('INSERT INTO public.kept VALUES (1)');
    await server.update(held(true), lookup);
    assert.equal(server.standby, true);
    assert.equal(await sql('SELECT pg_is_in_recovery() AS v'), true);
    assert.equal(await sql('SELECT count(*)::int AS v FROM public.kept'), 1);
    // 25006: read_only_sql_transaction.
    assert.equal(await sqlState('INSERT INTO public.kept VALUES (2)'), '25006');
  });

  it('released (enabled false), it is promoted and takes writes again', async () => {
    await server?.update(held(false), lookup);
    assert.equal(server?.standby, false);
    assert.equal(await sql('SELECT pg_is_in_recovery() AS v'), false);
    assert.equal(await sqlState('INSERT INTO public.kept VALUES (2)'), 'done');
    assert.equal(await sql('SELECT count(*)::int AS v FROM public.kept'), 2);
  });

  it('refuses a replica source that names no externalClusters entry', async () => {
    const wrong = held(true);
    wrong.spec.replica.source = 'elsewhere';
    await assert.rejects(
      server?.update(wrong, lookup) ?? Promise.resolve(),
      /names no externalClusters/,
    );
  });
});
