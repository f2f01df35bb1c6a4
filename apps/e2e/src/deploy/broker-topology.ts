import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { AppName, EventDef, ServiceName } from '@pgcloud/contracts';
import * as contracts from '@pgcloud/contracts';
import { SERVICE_CALLS, SERVICE_NAMES } from '@pgcloud/contracts';
import { eventsExchange, eventsQueueName, queueName } from '@pgcloud/messaging';
import { KUBERNETES_DIR, ROOT } from './manifests.js';

/** What one app does on the broker, read from its code. */
export interface BrokerUse {
  app: AppName;
  /** The service whose request queue it consumes (startService in its main.ts). */
  serves?: ServiceName;
  /** The services it sends requests to (SERVICE_CALLS, which a contracts spec checks). */
  calls: readonly ServiceName[];
  /** The events it writes to its outbox (`outbox.add(manager, X_EVENTS.y`). */
  publishes: string[];
  /**
   * The events its listeners handle: `subscriber.on(X_EVENTS.y`, or
   * `for (const s of LIST) ... subscriber.on(s.def` with LIST a list of its sources.
   */
  subscribes: string[];
}

/** Every `*_EVENTS` group the contracts declare, by the name code refers to it with. */
const EVENT_GROUPS = Object.fromEntries(
  Object.entries(contracts).filter(([name]) => name.endsWith('_EVENTS')),
) as Record<string, Record<string, EventDef<object>>>;

/** Every declared event name. */
export const ALL_EVENTS: string[] = Object.values(EVENT_GROUPS).flatMap((group) =>
  Object.values(group).map((def) => def.name),
);

function sources(dir: string, found: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) sources(path, found);
    else if (/(?<!\.spec|\.int-spec)\.ts$/.test(entry.name)) found.push(path);
  }
  return found;
}

function eventsMatching(text: string, pattern: RegExp, file: string): string[] {
  return [...text.matchAll(pattern)].map(([, group = '', key = '']) => {
    const def = EVENT_GROUPS[group]?.[key];
    if (!def) throw new Error(`${file} names ${group}.${key}, which the contracts do not declare`);
    return def.name;
  });
}

/** The events of `export const LIST ... = [ ... ];` in one of `files`. */
function eventsOfList(list: string, files: Map<string, string>): string[] {
  const declaration = new RegExp(`export const ${list}\\b[^=]*=\\s*\\[([\\s\\S]*?)\\n\\];`);
  for (const [file, text] of files) {
    const body = declaration.exec(text)?.[1];
    if (body !== undefined) return eventsMatching(body, /\b([A-Z_]+_EVENTS)\.(\w+)/g, file);
  }
  throw new Error(`no source declares ${list}, whose events a listener subscribes to`);
}

/**
 * The events a file's listeners handle. Every `subscriber.on(` must name its event as
 * `X_EVENTS.y` or as `s.def` of each `s` of a list (`for (const s of LIST)`): one this
 * reading cannot follow is an error, not a subscription left out.
 */
function handledEvents(text: string, file: string, files: Map<string, string>): string[] {
  const direct = eventsMatching(text, /subscriber\.on\(\s*([A-Z_]+_EVENTS)\.(\w+)/g, file);
  const lists = [
    ...text.matchAll(/for \(const (\w+) of (\w+)\)[^;]*?subscriber\.on\(\s*\1\.def\b/g),
  ];
  const calls = [...text.matchAll(/subscriber\.on\(/g)].length;
  if (calls !== direct.length + lists.length)
    throw new Error(`${file} subscribes to an event this reading cannot follow`);
  return [...direct, ...lists.flatMap(([, , list = '']) => eventsOfList(list, files))];
}

/** What each of the cloud apps does on the broker, from its sources. */
export function brokerUses(): BrokerUse[] {
  return (Object.keys(SERVICE_CALLS) as AppName[]).map((app) => {
    const dir = join(ROOT, 'apps', app, 'src');
    const main = readFileSync(join(dir, 'main.ts'), 'utf8');
    const served = /startService\([\s\S]*?,\s*'(\w+)'/.exec(main)?.[1];
    if (served !== undefined && !SERVICE_NAMES.includes(served as ServiceName))
      throw new Error(`apps/${app}/src/main.ts serves ${served}, which is not a service`);
    const publishes = new Set<string>();
    const subscribes = new Set<string>();
    const files = new Map(sources(dir).map((file) => [file, readFileSync(file, 'utf8')]));
    for (const [file, text] of files) {
      const added = eventsMatching(text, /\.add\(\s*\w+,\s*([A-Z_]+_EVENTS)\.(\w+)/g, file);
      added.forEach((name) => publishes.add(name));
      handledEvents(text, file, files).forEach((name) => subscribes.add(name));
    }
    return {
      app,
      serves: served as ServiceName | undefined,
      calls: SERVICE_CALLS[app],
      publishes: [...publishes].sort(),
      subscribes: [...subscribes].sort(),
    };
  });
}

/** rabbitmq/definitions.json, as these checks read it. */
export interface Definitions {
  vhosts: { name: string }[];
  users: { name: string; password_hash: string; hashing_algorithm: string; tags: string[] }[];
  permissions: { user: string; vhost: string; configure: string; write: string; read: string }[];
  topic_permissions: {
    user: string;
    vhost: string;
    exchange: string;
    write: string;
    read: string;
  }[];
  exchanges: { name: string; vhost: string; type: string; durable: boolean }[];
}

export function readDefinitions(): Definitions {
  return JSON.parse(
    readFileSync(join(KUBERNETES_DIR, 'rabbitmq', 'definitions.json'), 'utf8'),
  ) as Definitions;
}

/** One AMQP operation's permission check: a kind of access to a named resource. */
export interface Access {
  access: 'configure' | 'write' | 'read';
  resource: string;
}

/** What an app needs to do its work, with the deployment's queue prefix. */
export function needs(use: BrokerUse, prefix: string): { resources: Access[]; topics: Access[] } {
  const resources: Access[] = [];
  const add = (access: Access['access'], ...names: string[]): void => {
    for (const resource of names) resources.push({ access, resource });
  };
  const exchange = eventsExchange(prefix);
  if (use.serves) {
    const own = queueName(prefix, use.serves);
    add('configure', own); // assertQueue
    add('read', own); // consume
    add('write', 'amq.default'); // replies: sendToQueue(replyTo) on the default exchange
  }
  for (const callee of use.calls) {
    add('configure', queueName(prefix, callee)); // the client asserts the callee's queue
    add('write', 'amq.default'); // requests: sendToQueue on the default exchange
    add('read', 'amq.rabbitmq.reply-to'); // answers over direct reply-to
  }
  if (use.publishes.length > 0) {
    add('configure', exchange); // assertExchange
    add('write', exchange); // publish
  }
  if (use.subscribes.length > 0) {
    if (!use.serves) throw new Error(`${use.app} subscribes to events but serves no queue`);
    const events = eventsQueueName(prefix, use.serves);
    add('configure', exchange, events); // assertExchange, assertQueue
    add('write', events); // queue.bind: write on the queue...
    add('read', exchange, events); // ...read on the exchange; consume
  }
  return {
    resources,
    topics: [
      ...use.publishes.map((resource) => ({ access: 'write' as const, resource })),
      ...use.subscribes.map((resource) => ({ access: 'read' as const, resource })),
    ],
  };
}

/** What an app must not be able to do: touch another app's queues or speak for it. */
export function mustNotReach(
  use: BrokerUse,
  prefix: string,
): { resources: Access[]; topics: Access[] } {
  const resources: Access[] = [];
  for (const service of SERVICE_NAMES) {
    if (service === use.serves) continue;
    const queue = queueName(prefix, service);
    const events = eventsQueueName(prefix, service);
    resources.push({ access: 'read', resource: queue }, { access: 'read', resource: events });
    resources.push(
      { access: 'configure', resource: events },
      { access: 'write', resource: events },
    );
    if (!use.calls.includes(service)) resources.push({ access: 'configure', resource: queue });
  }
  if (use.publishes.length === 0)
    resources.push({ access: 'write', resource: eventsExchange(prefix) });
  const topics: Access[] = [
    ...ALL_EVENTS.filter((name) => !use.publishes.includes(name)).map((resource) => ({
      access: 'write' as const,
      resource,
    })),
    ...ALL_EVENTS.filter((name) => !use.subscribes.includes(name)).map((resource) => ({
      access: 'read' as const,
      resource,
    })),
  ];
  return { resources, topics };
}

/**
 * Whether a RabbitMQ permission pattern allows a name: an unanchored regular expression
 * (these are all anchored), where the empty pattern allows nothing.
 */
export function allows(pattern: string, name: string): boolean {
  return pattern !== '' && new RegExp(pattern).test(name);
}
