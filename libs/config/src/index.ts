export * from './validate-env.js';
export * from './common-env.js';
export * from './storage-env.js';
export * from './loopback.js';
export * from './secret-file.js';
export * from './socket-timeouts-env.js';
export * from './duration.js';
export * from './secret-box.js';
