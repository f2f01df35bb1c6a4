export * from './api-client.js';
export * from './free-port.js';
export * from './launcher-env.js';
export * from './prerequisites.js';
export * from './sign-in.js';
export * from './stack.js';
export * from './up.js';
export * from './isolation.js';
