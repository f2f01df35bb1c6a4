export * from './validate-env.js';
export * from './common-env.js';
