export * from './rmq-options.js';
export * from './service-client.js';
export * from './ack.interceptor.js';
export * from './validation.pipe.js';
export * from './rpc-error.filter.js';
export * from './message.decorators.js';
export * from './start-service.js';
export * from './health.controller.js';
