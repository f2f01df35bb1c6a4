// DTO classes record their property types only when reflect-metadata is loaded first.
import 'reflect-metadata';
export * from './errors.js';
export * from './ids.js';
export * from './context.js';
export * from './auth/auth.patterns.js';
export * from './auth/auth.dto.js';
export * from './auth/auth.types.js';
export * from './projects/projects.patterns.js';
export * from './projects/projects.dto.js';
export * from './projects/projects.types.js';
export * from './local-databases/local-databases.dto.js';
export * from './local-databases/local-databases.types.js';
export * from './databases/databases.patterns.js';
export * from './databases/databases.dto.js';
export * from './databases/databases.types.js';
export * from './backups/backups.patterns.js';
export * from './backups/backups.types.js';
