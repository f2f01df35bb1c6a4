export * from './event-tables.js';
export * from './outbox.js';
export * from './outbox-relay.js';
export * from './event-subscriber.js';
export * from './event-validation.js';
export * from './event-providers.js';
