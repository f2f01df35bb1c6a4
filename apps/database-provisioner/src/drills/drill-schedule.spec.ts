import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { newId } from '@pgcloud/contracts';
import { drillIntervalMs, drillOverdue, drillSlotStart } from './drill-schedule.js';
import { provenBy } from './drill.jobs.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

describe('drill schedule', () => {
  it("puts each database's slot at its own offset, stable within a period", () => {
    const id = newId('db');
    const now = Date.UTC(2026, 10, 28, 12);
    const slot = drillSlotStart(id, now, DAY);
    assert.ok(slot <= now && slot > now - DAY);
    assert.equal(drillSlotStart(id, slot, DAY), slot);
    assert.equal(drillSlotStart(id, slot + DAY - 1, DAY), slot);
    assert.equal(drillSlotStart(id, slot + DAY, DAY), slot + DAY);
  });

  it("spreads a deployment's drills over the period", () => {
    const now = Date.UTC(2026, 10, 28);
    const perHour = new Array<number>(24).fill(0);
    for (let i = 0; i < 2400; i++) {
      const into = now - drillSlotStart(newId('db'), now, DAY);
      const hour = Math.floor(into / HOUR);
      perHour[hour] = (perHour[hour] ?? 0) + 1;
    }
    // 100 an hour on average; a hash spreads them within a loose band.
    for (const count of perHour) assert.ok(count > 50 && count < 150, `${count} in one hour`);
  });

  it("takes the period of the owner's tier, Free's when unknown", () => {
    const intervals = { free: 7 * DAY, pro: DAY };
    assert.equal(drillIntervalMs('pro', intervals), DAY);
    assert.equal(drillIntervalMs('free', intervals), 7 * DAY);
    assert.equal(drillIntervalMs(undefined, intervals), 7 * DAY);
  });

  it('is overdue with no drill passed in two periods, once old enough to have had one', () => {
    const now = Date.UTC(2026, 10, 28);
    const database = (createdDaysAgo: number, provenDaysAgo?: number) => ({
      id: 'db_x',
      ownerId: 'user_x',
      createdAt: new Date(now - createdDaysAgo * DAY),
      lastProvenRestorable:
        provenDaysAgo === undefined
          ? null
          : {
              at: new Date(now - provenDaysAgo * DAY).toISOString(),
              drill_id: 'drl_x',
              backup_id: 'bkp_x',
              restore_seconds: 1,
            },
    });
    assert.equal(drillOverdue(database(1), now, DAY), false, 'too young');
    assert.equal(drillOverdue(database(3), now, DAY), true, 'never proven');
    assert.equal(drillOverdue(database(30, 1.5), now, DAY), false);
    assert.equal(drillOverdue(database(30, 2.5), now, DAY), true);
  });

  it('proves a backup restorable only when the checks ran and all passed', () => {
    const check = (name: 'consistent' | 'amcheck' | 'wal_chain', passed = true) => ({
      name,
      passed,
      detail: '',
    });
    assert.equal(provenBy([check('consistent'), check('amcheck')]), true);
    assert.equal(
      provenBy([check('consistent'), check('amcheck'), check('wal_chain', false)]),
      false,
    );
    assert.equal(provenBy([check('wal_chain')]), false, 'nothing restored');
    assert.equal(provenBy([]), false);
  });
});
