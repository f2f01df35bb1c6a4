import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';
import type { LocalConnection } from '@pgcloud/contracts';
import { DomainError } from '@pgcloud/contracts';
import type { Catalogue, DatabaseIdentity } from '../catalogue/catalogue.js';
import type { SnapshotCatalogue } from '../catalogue/snapshot-catalogue.js';
import type { ArchivePulls } from '../pulls/archive-pulls.js';
import type { ManagedServer } from '../server/managed-server.js';
import type { DatabaseContents, DatabaseInspector } from './database-inspector.js';
import { LocalDatabasesService } from './local-databases.service.js';
import type { ServerDatabase, ServerDatabases } from './server-databases.js';

const CATALOGUE = 'pgcloud_daemon';

/** An error as node-postgres throws it: PostgreSQL's SQLSTATE in `code`. */
function pgError(code: string): Error {
  return Object.assign(new Error(`SQLSTATE ${code}`), { code });
}
const EMPTY: DatabaseContents = {
  tables: 0,
  views: 0,
  functions: 0,
  indexes: 0,
  schemas: [{ name: 'public', tableCount: 0 }],
  extensions: [{ name: 'plpgsql', version: '1.0' }],
};

/** A server in memory: what the service sees of PostgreSQL, and what it asked of it. */
class FakeServer {
  databases = new Map<string, ServerDatabase>();
  sessions = new Map<string, number>();
  created: { name: string; template: string; owner?: string }[] = [];
  dropped: string[] = [];
  forgotten: string[] = [];
  pulled: string[] = [];
  lifetimes = new Map<string, { expiresAt: Date | null; temporary: boolean }>();
  /** Errors the next create or inspection throws, as node-postgres would. */
  createError?: Error;
  inspectError?: Error;
  private nextOid = 20000;

  constructor() {
    for (const name of ['postgres', 'template0', 'template1', CATALOGUE]) this.add(name);
  }

  add(name: string): ServerDatabase {
    const database = { name, oid: (this.nextOid += 1), size: 7_500_000 };
    this.databases.set(name, database);
    return database;
  }

  service(): LocalDatabasesService {
    const visible = (hidden: readonly string[]): ServerDatabase[] =>
      [...this.databases.values()].filter((d) => !hidden.includes(d.name));
    const databases = {
      usable: (hidden: readonly string[]) => Promise.resolve(visible(hidden)),
      find: (name: string, hidden: readonly string[]) =>
        Promise.resolve(visible(hidden).find((d) => d.name === name)),
      exists: (name: string) => Promise.resolve(this.databases.has(name)),
      idle: (name: string) => Promise.resolve((this.sessions.get(name) ?? 0) === 0),
      create: (name: string, template: string, owner?: string) => {
        if (this.createError) return Promise.reject(this.createError);
        this.created.push({ name, template, owner });
        this.add(name);
        return Promise.resolve();
      },
      drop: (name: string) => {
        this.dropped.push(name);
        this.databases.delete(name);
        return Promise.resolve();
      },
    } as unknown as ServerDatabases;
    const inspector = {
      contents: () =>
        this.inspectError ? Promise.reject(this.inspectError) : Promise.resolve(EMPTY),
      tableCount: (name: string) =>
        name === 'vanishing' ? Promise.reject(pgError('3D000')) : Promise.resolve(2),
    } as unknown as DatabaseInspector;
    const catalogue = {
      entries: (found: readonly DatabaseIdentity[]) =>
        Promise.resolve(
          new Map(
            found.map((d) => [
              d.name,
              {
                createdAt: new Date(Date.UTC(2026, 0, 1)),
                expiresAt: this.lifetimes.get(d.name)?.expiresAt ?? null,
                temporary: this.lifetimes.get(d.name)?.temporary ?? false,
              },
            ]),
          ),
        ),
      setLifetime: (name: string, lifetime: { expiresAt: Date | null; temporary?: boolean }) => {
        const before = this.lifetimes.get(name);
        this.lifetimes.set(name, {
          expiresAt: lifetime.expiresAt,
          temporary: lifetime.temporary ?? before?.temporary ?? false,
        });
        return Promise.resolve();
      },
      prune: () => Promise.resolve(),
      forget: (name: string) => {
        this.forgotten.push(name);
        return Promise.resolve();
      },
    } as unknown as Catalogue;
    const server = {
      catalogueDatabase: CATALOGUE,
      owner: 'pgcloud',
      connection: (database: string): LocalConnection => ({
        host: '127.0.0.1',
        port: 5481,
        database,
        user: 'pgcloud',
        password: 'pw',
        connectionString: `postgresql://pgcloud:pw@127.0.0.1:5481/${database}`,
      }),
    } as unknown as ManagedServer;
    const snapshots = {
      all: () => Promise.resolve([]),
      removeAll: () => Promise.resolve(),
    } as unknown as SnapshotCatalogue;
    // A pull's own steps are the archive-pulls e2e's; here, only when the service asks for one.
    const pulls = {
      restore: (name: string) => {
        this.pulled.push(name);
        this.add(name);
        return Promise.resolve();
      },
    } as unknown as ArchivePulls;
    return new LocalDatabasesService(server, databases, inspector, catalogue, snapshots, pulls);
  }
}

async function refusal(promise: Promise<unknown>): Promise<string> {
  const err = await promise.then(
    () => assert.fail('expected a refusal'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof DomainError, String(err));
  return err.code;
}

describe('LocalDatabasesService', () => {
  let server: FakeServer;
  let service: LocalDatabasesService;
  beforeEach(() => {
    server = new FakeServer();
    service = server.service();
  });

  it('creates a blank database from template0, owned by the login role', async () => {
    const detail = await service.create({ name: 'shop' });
    assert.deepEqual(server.created, [{ name: 'shop', template: 'template0', owner: 'pgcloud' }]);
    assert.equal(detail.name, 'shop');
    assert.equal(detail.createdAt, '2026-01-01T00:00:00.000Z');
    assert.equal(detail.connection.database, 'shop');
    assert.deepEqual(Object.keys(detail), [
      'name',
      'size',
      'createdAt',
      'expiresAt',
      'temporary',
      'tables',
      'views',
      'functions',
      'indexes',
      'schemas',
      'extensions',
      'connection',
    ]);
  });

  it('pulls an archive only for a free name, and never with a template', async () => {
    const fromArchive = { path: '/tmp/shop.tar.zst', checksumSha256: 'a'.repeat(64) };
    server.add('base');
    assert.equal(
      await refusal(service.create({ name: 'x', template: 'base', fromArchive })),
      'VALIDATION_ERROR',
    );
    assert.equal(
      await refusal(service.create({ name: 'base', fromArchive })),
      'DATABASE_NAME_TAKEN',
    );
    assert.deepEqual(server.pulled, []);
    const detail = await service.create({ name: 'shop', fromArchive, ttlSeconds: 60 });
    assert.deepEqual(server.pulled, ['shop']);
    assert.deepEqual(server.created, [], 'the pull makes the database, not CREATE DATABASE');
    assert.notEqual(detail.expiresAt, null);
  });

  it('copies a template', async () => {
    server.add('base');
    await service.create({ name: 'copy', template: 'base' });
    assert.deepEqual(server.created, [{ name: 'copy', template: 'base', owner: 'pgcloud' }]);
  });

  it("hides PostgreSQL's databases and its own: 404 to GET and DELETE, 409 to POST", async () => {
    for (const name of ['postgres', 'template0', 'template1', CATALOGUE]) {
      assert.equal(await refusal(service.get(name)), 'DATABASE_NOT_FOUND');
      assert.equal(await refusal(service.delete(name)), 'DATABASE_NOT_FOUND');
      assert.equal(await refusal(service.create({ name })), 'DATABASE_NAME_TAKEN');
      assert.equal(
        await refusal(service.create({ name: 'x', template: name })),
        'TEMPLATE_NOT_FOUND',
      );
    }
    assert.deepEqual((await service.list()).databases, []);
    assert.deepEqual(server.created, []);
    assert.deepEqual(server.dropped, []);
  });

  it('refuses a duplicate, an unknown template and a template in use, in that order', async () => {
    server.add('shop');
    server.add('base');
    assert.equal(await refusal(service.create({ name: 'shop' })), 'DATABASE_NAME_TAKEN');
    assert.equal(
      await refusal(service.create({ name: 'shop', template: 'nope' })),
      'TEMPLATE_NOT_FOUND',
    );
    server.sessions.set('base', 1);
    assert.equal(
      await refusal(service.create({ name: 'shop', template: 'base' })),
      'DATABASE_NAME_TAKEN',
    );
    assert.equal(
      await refusal(service.create({ name: 'new', template: 'base' })),
      'TEMPLATE_IN_USE',
    );
    assert.deepEqual(server.created, []);
  });

  it('answers a race lost inside PostgreSQL as the checks would have', async () => {
    server.add('base');
    const cases = [
      ['42P04', 'DATABASE_NAME_TAKEN'],
      ['55006', 'TEMPLATE_IN_USE'],
      ['3D000', 'TEMPLATE_NOT_FOUND'],
    ] as const;
    for (const [code, expected] of cases) {
      server.createError = pgError(code);
      assert.equal(await refusal(service.create({ name: 'new', template: 'base' })), expected);
    }
    server.createError = pgError('53100');
    await assert.rejects(service.create({ name: 'new' }), { code: '53100' });
  });

  it('looks names up as given, and finds nothing for what no name can be', async () => {
    server.add('Odd Name');
    assert.equal((await service.get('Odd Name')).name, 'Odd Name');
    for (const name of ['', 'a\0b', 'x'.repeat(64), "x'; DROP DATABASE shop; --"])
      assert.equal(await refusal(service.get(name)), 'DATABASE_NOT_FOUND');
  });

  it('drops and forgets a database', async () => {
    server.add('shop');
    assert.deepEqual(await service.delete('shop'), { name: 'shop', deleted: true });
    assert.deepEqual(server.dropped, ['shop']);
    assert.deepEqual(server.forgotten, ['shop']);
    assert.equal(await refusal(service.delete('shop')), 'DATABASE_NOT_FOUND');
  });

  it('lists with table counts, leaving out a database dropped while it counted', async () => {
    server.add('b');
    server.add('vanishing');
    server.add('a');
    const { databases } = await service.list();
    assert.deepEqual(
      databases.map((d) => [d.name, d.tableCount, d.size]),
      [
        ['b', 2, 7_500_000],
        ['a', 2, 7_500_000],
      ],
    );
  });

  it('answers 404 for a database dropped while its detail was read', async () => {
    server.add('shop');
    server.inspectError = pgError('57P01');
    assert.equal(await refusal(service.get('shop')), 'DATABASE_NOT_FOUND');
  });

  it('keeps an expiry and a temporary mark, moves and clears the expiry, refuses a bad one', async () => {
    const before = Date.now();
    const made = await service.create({ name: 'brief', ttlSeconds: 60, temporary: true });
    assert.ok(Date.parse(made.expiresAt ?? '') >= before + 60_000);
    assert.equal(made.temporary, true);
    const at = new Date(Date.now() + 86_400_000).toISOString();
    const moved = await service.update('brief', { expiresAt: at });
    assert.equal(moved.expiresAt, at);
    assert.equal(moved.temporary, true, 'a PATCH leaves the temporary mark');
    assert.equal((await service.update('brief', { expiresAt: null })).expiresAt, null);
    assert.equal(await refusal(service.update('brief', {})), 'VALIDATION_ERROR');
    assert.equal(await refusal(service.update('absent', { ttlSeconds: 5 })), 'DATABASE_NOT_FOUND');
    const past = new Date(Date.now() - 1000).toISOString();
    assert.equal(
      await refusal(service.create({ name: 'late', expiresAt: past })),
      'VALIDATION_ERROR',
    );
    assert.deepEqual(
      server.created.map((c) => c.name),
      ['brief'],
      'a refused create makes nothing',
    );
  });
});
