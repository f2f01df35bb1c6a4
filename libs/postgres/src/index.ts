export * from './quote.js';
export * from './metadata-db.js';
