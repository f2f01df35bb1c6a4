export * from './envelope.interceptor.js';
export * from './error-response.js';
export * from './host-check.js';
export * from './http-error.filter.js';
export * from './raw-response.js';
export * from './request-id.middleware.js';
export * from './validation.pipe.js';
export * from './socket-timeouts.js';
