import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sizeSettings } from './server-size.js';

const defaults = { cpu: 1, memory: 1, storage: 10 };

describe('sizeSettings', () => {
  it('gives the default size (1 vCPU, 1 GiB) 256MB of shared_buffers', () => {
    assert.deepEqual(sizeSettings(defaults), {
      shared_buffers: '256MB',
      effective_cache_size: '768MB',
      max_worker_processes: 4,
      max_parallel_workers: 2,
      max_parallel_workers_per_gather: 1,
      max_parallel_maintenance_workers: 1,
      temp_file_limit: '10485760kB',
    });
  });

  it('caps temp files at the storage size', () => {
    assert.equal(sizeSettings({ ...defaults, storage: 1 }).temp_file_limit, '1048576kB');
    assert.equal(sizeSettings({ ...defaults, storage: 1024 }).temp_file_limit, '1073741824kB');
    assert.equal(sizeSettings({ ...defaults, storage: 1.5 }).temp_file_limit, '1572864kB');
  });

  it('scales memory: 25% shared_buffers, 75% effective_cache_size', () => {
    const large = sizeSettings({ cpu: 16, memory: 64, storage: 1024 });
    assert.equal(large.shared_buffers, '16384MB');
    assert.equal(large.effective_cache_size, '49152MB');
  });

  it('keeps the smallest sizes workable', () => {
    const small = sizeSettings({ cpu: 0.25, memory: 0.25, storage: 1 });
    assert.equal(small.shared_buffers, '64MB');
    assert.equal(small.effective_cache_size, '192MB');
    assert.equal(small.max_parallel_workers, 2);
    assert.equal(small.max_parallel_workers_per_gather, 1);
  });

  it('maps cpu to parallel workers, rounding fractions up for the pool', () => {
    const sized = sizeSettings({ cpu: 4.5, memory: 8, storage: 10 });
    assert.equal(sized.max_parallel_workers, 5);
    assert.equal(sized.max_worker_processes, 7);
    assert.equal(sized.max_parallel_workers_per_gather, 2);
    assert.equal(sized.max_parallel_maintenance_workers, 2);
  });
});
