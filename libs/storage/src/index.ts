export * from './object-store.js';
export * from './settings.js';
