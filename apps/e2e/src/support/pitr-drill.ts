import assert from 'node:assert/strict';
import type {
  ConnectionDetails,
  CreatedPitrRestore,
  Database,
  Project,
  Restore,
  RestorePoint,
} from '@pgcloud/contracts';
import type { SignedIn } from '@pgcloud/testing';
import { eventuallyDefined, signIn } from '@pgcloud/testing';
import { expectData } from './assertions.js';
import { psql, runningDatabase } from './databases.js';
import type { Marker } from './markers.js';
import { MARKERS_TABLE_SQL, insertMarkers, markersIn } from './markers.js';
import { recoveryWindow, waitForArchive } from './pitr.js';
import { assertWatchedToDone, watchRestore } from './restores.js';
import { newClient, sharedStack, uniqueLogin } from './shared-stack.js';

/** Markers the drill database starts with, about 100 ms apart. */
export const DRILL_MARKERS = 30;

/**
 * The PITR drill of the restore suites: a Pro user's database `drill` with PITR on and
 * markers 1..DRILL_MARKERS committed about 100 ms apart, each with the commit time the
 * server stamped, all inside the recovery window.
 */
export class PitrDrill {
  private copies = 0;

  private constructor(
    readonly owner: SignedIn,
    readonly project: Project,
    readonly database: Database,
    readonly connection: ConnectionDetails,
    readonly markers: Marker[],
  ) {}

  static async start(): Promise<PitrDrill> {
    const stack = await sharedStack();
    const login = uniqueLogin('driller');
    await signIn(await newClient(), login);
    await stack.runAdmin('auth-service', ['set-tier', login, 'pro']);
    const owner = await signIn(await newClient(), login);
    const project = expectData<Project>(await owner.api.post('/projects', { name: 'drills' }), 201);
    const { database, connection } = await runningDatabase(owner.api, project.id, 'drill');
    const path = `/projects/${project.id}/databases/drill`;
    await psql(connection.connection_string, MARKERS_TABLE_SQL);
    expectData(await owner.api.post(`${path}/pitr/enable`, { retention_days: 2 }), 200);
    await waitForArchive(owner.api, `${path}/pitr`);
    const markers = await insertMarkers(connection.connection_string, 1, DRILL_MARKERS);
    const drill = new PitrDrill(owner, project, database, connection, markers);
    await drill.windowCovers(markers);
    return drill;
  }

  /** The drill database's path under the API. */
  get path(): string {
    return `/projects/${this.project.id}/databases/drill`;
  }

  /** Waits until the recovery window reaches the last of `markers`. */
  async windowCovers(markers: Marker[]): Promise<void> {
    const last = markers.at(-1)?.committed.micros ?? 0n;
    await eventuallyDefined('the window covers the markers', async () => {
      const window = await recoveryWindow(this.owner.api, `${this.path}/pitr`);
      return window.to && BigInt(Date.parse(window.to)) * 1000n >= last ? window : undefined;
    });
  }

  /**
   * Restores into a new database and answers the markers it holds: to a time, or to the
   * target a body gives (target_lsn, target_restore_point). Watched every 300 ms: phases in
   * order to `done`, numbers never going back.
   */
  async restoreCopy(
    target: string | Record<string, string>,
  ): Promise<{ restore: Restore; markers: number[] }> {
    this.copies++;
    const name = `drill-copy-${this.copies}`;
    const created = expectData<CreatedPitrRestore>(
      await this.owner.api.post(`${this.path}/pitr/restore`, {
        ...(typeof target === 'string' ? { target_time: target } : target),
        target_database: name,
      }),
      201,
    );
    assert.equal(created.status, 'pending');
    assert.equal(created.target_database, name);
    const seen = await watchRestore(this.owner.api, this.path, created.restore_id);
    assertWatchedToDone(seen);
    const restore = seen.at(-1)!;
    assert.equal(restore.kind, 'pitr');
    assert.ok(restore.progress.wal_files_total >= 1, 'the plan had WAL to replay');
    assert.ok(restore.progress.wal_files_done >= (restore.wal_files_applied ?? 0));
    assert.equal(restore.target_time, created.target_time);
    assert.equal(restore.target_lsn, created.target_lsn);
    assert.equal(restore.target_restore_point, created.target_restore_point);
    assert.ok((restore.wal_files_applied ?? 0) >= 1, 'segments were replayed');
    const copy = expectData<ConnectionDetails>(
      await this.owner.api.get(`/projects/${this.project.id}/databases/${name}/url`),
      200,
    );
    const found = await markersIn(copy.connection_string);
    expectData(await this.owner.api.delete(`/projects/${this.project.id}/databases/${name}`), 200);
    return { restore, markers: found };
  }

  /**
   * Commits marker `first`, makes a restore point, commits `first + 1`, reads the WAL
   * position, commits `first + 2`, and waits until the archive holds them all.
   */
  async pointAndPosition(
    first: number,
    pointName: string,
  ): Promise<{ point: RestorePoint; lsn: string }> {
    const connectionString = this.connection.connection_string;
    await insertMarkers(connectionString, first, first, 0);
    const point = expectData<RestorePoint>(
      await this.owner.api.post(`${this.path}/pitr/restore-points`, { name: pointName }),
      201,
    );
    assert.equal(point.name, pointName);
    assert.match(point.lsn, /^[0-9A-F]+\/[0-9A-F]+$/);
    await insertMarkers(connectionString, first + 1, first + 1, 0);
    const lsn = await psql(connectionString, 'SELECT pg_current_wal_insert_lsn()');
    await this.windowCovers(await insertMarkers(connectionString, first + 2, first + 2, 0));
    return { point, lsn };
  }
}
