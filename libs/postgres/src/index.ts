export * from './quote.js';
export * from './metadata-db.js';
export * from './os-user.js';
export * from './scram.js';
export * from './certificates.js';
export * from './tls-login.js';
export * from './metadata-typeorm.js';
export * from './base-backup.js';
