import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { LocalDatabaseDetail } from '@pgcloud/contracts';
import { expectData } from '../support/assertions.js';
import { sql } from '../support/local-daemon.js';
import { CALLERS_SQL, PLANT_SQL, SPRING_SQL } from '../support/search-path-trap.js';
import { sharedDaemon } from '../support/shared-daemon.js';

describe('local daemon: an operator planted in a database never runs in its sessions', () => {
  it("reads a database whose owner put a planted = before the catalog's, running none of it", async () => {
    const api = await (await sharedDaemon()).api();
    const name = 'planted';
    const created = expectData<LocalDatabaseDetail>(await api.post('/databases', { name }), 201);
    const url = created.connection.connectionString;
    try {
      await sql(url, PLANT_SQL(name));
      // The trap works: a session that takes the database's search_path runs the plant.
      await sql(url, SPRING_SQL);
      const caught = await sql<{ caller: string }>(url, CALLERS_SQL);
      assert.deepEqual(
        caught.map((row) => row.caller),
        [created.connection.user],
      );
      await sql(url, 'DELETE FROM public.calls');

      // The daemon reads the database's catalog for its detail and for the list.
      const detail = expectData<LocalDatabaseDetail>(await api.get(`/databases/${name}`), 200);
      assert.equal(detail.tables, 1, 'public.calls, counted');
      assert.equal(detail.functions, 1, 'public.oid_equal, counted');
      expectData(await api.get('/databases'), 200);

      const calls = await sql<{ caller: string }>(url, CALLERS_SQL);
      assert.deepEqual(calls, [], 'nothing planted ran in the daemon sessions');
      const [owner] = await sql<{ rolsuper: boolean }>(
        url,
        'SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = current_user',
      );
      assert.equal(owner?.rolsuper, false);
    } finally {
      expectData(await api.delete(`/databases/${name}`), 200);
    }
  });
});
