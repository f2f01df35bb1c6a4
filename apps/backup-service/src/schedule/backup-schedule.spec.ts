import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { expiryOf, scheduleOffsetMs, scheduleSlot } from './backup-schedule.js';

const DAY = 86_400_000;

describe('backup schedule', () => {
  it('moves to the next period exactly once per interval, at the database offset', () => {
    const id = 'db_k3v9x0q2m8t4b7w1c5zd';
    const offset = scheduleOffsetMs(id, DAY);
    const start = 20_000 * DAY + offset;
    assert.equal(scheduleSlot(id, start, DAY), 20_000);
    assert.equal(scheduleSlot(id, start - 1, DAY), 19_999);
    assert.equal(scheduleSlot(id, start + DAY - 1, DAY), 20_000);
    assert.equal(scheduleSlot(id, start + DAY, DAY), 20_001);
  });

  it('spreads databases over the period', () => {
    const offsets = new Set(
      Array.from({ length: 50 }, (_, i) =>
        Math.floor(scheduleOffsetMs(`db_${i}`, DAY) / 3_600_000),
      ),
    );
    assert.ok(offsets.size >= 12, `50 databases fall in ${offsets.size} different hours`);
    for (let i = 0; i < 50; i++) {
      const offset = scheduleOffsetMs(`db_${i}`, DAY);
      assert.ok(offset >= 0 && offset < DAY);
    }
  });

  it('keeps automated backups 7 days on Free (and unknown owners) and 30 on Pro', () => {
    const retention = { free: 7 * 86_400, pro: 30 * 86_400 };
    assert.equal(expiryOf('free', 0, retention).getTime(), 7 * DAY);
    assert.equal(expiryOf(undefined, 0, retention).getTime(), 7 * DAY);
    assert.equal(expiryOf('pro', 0, retention).getTime(), 30 * DAY);
  });
});
