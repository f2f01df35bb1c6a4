/** A user's tier; carried with the caller's identity in every message. */
export type Tier = 'free' | 'pro';

/** Who asks and under which request id; part of every message between services. */
export interface RequestContext {
  requestId: string;
  userId?: string;
  tier?: Tier;
  /**
   * When the caller stops waiting for the answer, in epoch milliseconds (docs/api/errors.md#timeouts). The gateway sets it when a request arrives; each message
   * carries its caller's own, so a service asks others only for what time is left and
   * starts nothing its caller has already answered 503 for. Comparing it with another
   * host's clock assumes the deployment's clocks agree (NTP) to well within a second.
   */
  deadline?: number;
}

/** The body of every request message: the caller's context and the payload. */
export interface Message<T> {
  ctx: RequestContext;
  payload: T;
}

/** The pattern every service answers for the gateway's health check. */
export const HEALTH_PING = 'health.ping';

/** What a service answers to HEALTH_PING. */
export interface HealthPong {
  service: string;
}

/** The cloud's processes; each logs in to the broker with a login of its own. */
export const APP_NAMES = [
  'api-gateway',
  'auth-service',
  'project-service',
  'database-provisioner',
  'backup-service',
  'pitr-worker',
  'notification-service',
] as const;

/** One of the cloud's processes. */
export type AppName = (typeof APP_NAMES)[number];

/** The RabbitMQ queue of each service; a deployment adds its own prefix. */
export const SERVICE_QUEUES = {
  auth: 'auth-service',
  projects: 'project-service',
  databases: 'database-provisioner',
  backups: 'backup-service',
  pitr: 'pitr-worker',
  notifications: 'notification-service',
} as const;

/** A service the gateway talks to. */
export type ServiceName = keyof typeof SERVICE_QUEUES;

/** Every service, in SERVICE_QUEUES' order. */
export const SERVICE_NAMES = Object.keys(SERVICE_QUEUES) as ServiceName[];

/** The topic exchange that carries domain events; a deployment adds its own prefix. */
export const EVENTS_EXCHANGE = 'events';

/** A domain event as it travels on EVENTS_EXCHANGE, routed by its name. */
export interface DomainEvent<T> {
  event: string;
  payload: T;
  request_id: string;
  at: string;
}
