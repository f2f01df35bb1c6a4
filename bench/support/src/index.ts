export * from './run-bench.js';
export * from './bench-report.js';
export * from './bench-samples.js';
export * from './metrics-text.js';
export * from './restore-phases.js';
export * from './bench-database.js';
