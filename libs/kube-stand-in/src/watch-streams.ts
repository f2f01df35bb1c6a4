import type { ServerResponse } from 'node:http';
import { ApiStatusError, badRequest } from './api-status.js';
import type { StoredObjects, StoreEvent } from './stored-objects.js';
import type { ResourcePath } from './resource-paths.js';
import { fieldFilter, labelFilter, type ObjectFilter } from './selectors.js';
import type { StoredObject, WatchEventType } from './stored-object.js';

/** A line of a watch stream. */
export interface WatchLine {
  type: WatchEventType | 'ERROR';
  object: unknown;
}

/**
 * `?watch=true` (or `1`) on a list path: a chunked stream of `{type, object}` JSON lines,
 * open until the client goes, `timeoutSeconds` passes or the server stops. From a
 * resourceVersion it replays the changes after it (an ERROR line with a 410 Expired Status
 * when they are no longer kept); without one (or with "0") it starts with an ADDED line
 * per object that exists. With selectors, an object that starts matching comes as ADDED and
 * one that stops matching as DELETED, as the API server does.
 */
export class WatchStreams {
  private readonly open = new Set<ServerResponse>();

  constructor(private readonly store: StoredObjects) {}

  serve(path: ResourcePath, query: URLSearchParams, response: ServerResponse): void {
    const byLabels = labelFilter(query.get('labelSelector'));
    const byFields = fieldFilter(query.get('fieldSelector'));
    const matches: ObjectFilter = (object) => byLabels(object) && byFields(object);
    const since = query.get('resourceVersion');
    const fromNow = since === null || since === '' || since === '0';
    if (!fromNow && !/^\d+$/.test(since)) throw badRequest(`invalid resourceVersion ${since}`);
    const replay = fromNow
      ? this.store.list(path.type, path.namespace).filter(matches).map(added)
      : this.store.changesAfter(Number(since))?.flatMap((event) => lineOf(event, path, matches));

    response.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-cache' });
    response.flushHeaders();
    const send = (line: WatchLine) => response.write(`${JSON.stringify(line)}\n`);
    if (!replay) {
      const expired = new ApiStatusError(410, `too old resource version: ${since}`, 'Expired');
      send({ type: 'ERROR', object: expired.toStatus() });
      response.end();
      return;
    }
    replay.forEach(send);
    const unsubscribe = this.store.subscribe((event) => lineOf(event, path, matches).forEach(send));
    this.open.add(response);
    const seconds = Number(query.get('timeoutSeconds') ?? 0);
    const timer = seconds > 0 ? setTimeout(() => response.end(), seconds * 1000) : undefined;
    const close = () => {
      unsubscribe();
      clearTimeout(timer);
      this.open.delete(response);
    };
    response.on('close', close);
  }

  /** Ends every open stream (the clients see the server close them). */
  closeAll(): void {
    for (const response of this.open) response.end();
    this.open.clear();
  }
}

function added(object: StoredObject): WatchLine {
  return { type: 'ADDED', object };
}

/** The line a watch of `path` sends for a change: none when the object is not its concern. */
function lineOf(event: StoreEvent, path: ResourcePath, matches: ObjectFilter): WatchLine[] {
  if (event.resourceType.kind !== path.type.kind) return [];
  if (path.namespace !== undefined && event.object.metadata.namespace !== path.namespace) return [];
  const now = matches(event.object);
  if (event.type !== 'MODIFIED') return now ? [{ type: event.type, object: event.object }] : [];
  const before = event.previous !== undefined && matches(event.previous);
  if (now) return [{ type: before ? 'MODIFIED' : 'ADDED', object: event.object }];
  return before ? [{ type: 'DELETED', object: event.object }] : [];
}
