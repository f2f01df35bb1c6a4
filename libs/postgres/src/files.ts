// The lib's parts that work on files and processes only, no client or server: what a worker
// thread loads (apps/database-provisioner's restore downloads). Through the lib's index a
// thread took about 0.9 s to start, loading everything else.
export * from './archive-extract.js';
export * from './os-user.js';
export * from './wal-positions.js';
export * from './zstd-buffer.js';
