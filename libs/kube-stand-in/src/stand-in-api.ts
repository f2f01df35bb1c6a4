/** The metadata (and spec and status) the stand-ins read of any object. */
export interface ApiObject {
  metadata: {
    name: string;
    namespace?: string;
    uid?: string;
    generation?: number;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    deletionTimestamp?: string;
    finalizers?: string[];
    ownerReferences?: { kind: string; name: string; uid: string }[];
  };
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
}

/**
 * The stand-ins' own client of the Kubernetes API (ApiServerStandIn's url and token):
 * plain fetch, JSON bodies, PATCH as a merge patch.
 */
export class StandInApi {
  constructor(
    private readonly url: string,
    private readonly token: string,
  ) {}

  /** The items of a list. */
  async list(path: string): Promise<ApiObject[]> {
    const found = (await this.request('GET', path)) as { items: ApiObject[] };
    return found.items;
  }

  /** One API call; `missing` lists the statuses answered as undefined. */
  async request(
    method: string,
    path: string,
    body?: unknown,
    missing: number[] = [],
  ): Promise<unknown> {
    const response = await fetch(`${this.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${this.token}`,
        'content-type': method === 'PATCH' ? 'application/merge-patch+json' : 'application/json',
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    if (missing.includes(response.status)) return undefined;
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
    return JSON.parse(text) as unknown;
  }
}
