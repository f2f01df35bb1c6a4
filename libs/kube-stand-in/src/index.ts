export * from './cnpg-cluster-fields.js';
export * from './cnpg-server.js';
export * from './service-proxy-stand-in.js';
export * from './api-server-stand-in.js';
export * from './cnpg-operator-stand-in.js';
export * from './kubernetes-stand-in.js';
export * from './kubelet-stand-in.js';
export * from './service-names.js';
