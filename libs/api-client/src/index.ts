export * from './generated/index.js';
export type { Client } from './generated/client/index.js';
export * from './api.js';
