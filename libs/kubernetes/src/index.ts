// @pgcloud/kubernetes: what the kubernetes driver and its test stand-ins share. Safe at
// runtime: no development dependency (validation is @pgcloud/kubernetes/validate).
export * from './names.js';
export * from './labels.js';
export * from './cnpg/cluster.types.js';
