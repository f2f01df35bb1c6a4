import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { LocalDatabaseDetail } from '@pgcloud/contracts';
import { expectData } from '../support/assertions.js';
import { sql } from '../support/local-daemon.js';
import { sharedDaemon } from '../support/shared-daemon.js';

/**
 * What the owner of a database can do to a reader that takes the database's search_path:
 * put `public` before the catalog and plant there an `=` on oids, which the daemon's
 * catalog reads use in their joins. The planted function notes who ran it.
 */
const PLANT_SQL = (database: string) => `
  CREATE TABLE public.calls (caller name NOT NULL);
  CREATE FUNCTION public.oid_equal(oid, oid) RETURNS boolean LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO public.calls VALUES (current_user);
      RETURN $1 OPERATOR(pg_catalog.=) $2;
    END $$;
  CREATE OPERATOR public.= (LEFTARG = oid, RIGHTARG = oid, FUNCTION = public.oid_equal);
  ALTER DATABASE "${database}" SET search_path = public, pg_catalog;`;

describe('local daemon: an operator planted in a database never runs in its sessions', () => {
  it("reads a database whose owner put a planted = before the catalog's, running none of it", async () => {
    const api = await (await sharedDaemon()).api();
    const name = 'planted';
    const created = expectData<LocalDatabaseDetail>(await api.post('/databases', { name }), 201);
    const url = created.connection.connectionString;
    try {
      await sql(url, PLANT_SQL(name));
      // The trap works: a session that takes the database's search_path runs the plant.
      await sql(url, 'SELECT 1::oid = 1::oid');
      const caught = await sql<{ caller: string }>(url, 'SELECT caller FROM public.calls');
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

      const calls = await sql<{ caller: string }>(url, 'SELECT caller FROM public.calls');
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
