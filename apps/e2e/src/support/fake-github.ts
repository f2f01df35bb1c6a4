import { randomBytes } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { rememberSecret } from '@pgcloud/testing';

/** An address of GET /user/emails. */
export interface FakeGithubEmail {
  email: string;
  primary: boolean;
  verified: boolean;
}

/** A GitHub account the fake signs in; `emails` defaults to the public email alone. */
export interface FakeGithubUser {
  id: number;
  login: string;
  email: string | null;
  emails?: FakeGithubEmail[];
}

/** What the fake's token endpoint answers for one device code, as a test scripts it. */
export type FakeDeviceState =
  | { kind: 'pending' }
  | { kind: 'slow_down'; interval: number }
  | { kind: 'denied' }
  | { kind: 'expired' }
  | { kind: 'failing' }
  | { kind: 'approved'; user: FakeGithubUser }
  | { kind: 'exchanged' };

/** The answer of /login/device/code, with values unlike the local provider's defaults. */
export interface FakeDeviceCode {
  device_code: string;
  user_code: string;
  verification_uri: string;
  expires_in: number;
  interval: number;
}

type JsonAnswer = [status: number, body: unknown];

/**
 * A GitHub-like server for the github identity provider's tests: the device flow's two
 * endpoints, /user and /user/emails. It checks what real GitHub would refuse (a wrong or
 * missing client_id, an unknown token, no JSON Accept or User-Agent) and keeps a list of
 * such requests, which tests expect to stay empty.
 */
export class FakeGithub {
  /** Every request, as `METHOD /path`. */
  readonly requests: string[] = [];
  /** Requests real GitHub would have refused, with the reason. */
  readonly refused: string[] = [];
  private readonly devices = new Map<string, FakeDeviceState>();
  private readonly issued = new Map<string, FakeDeviceCode>();
  private readonly tokens = new Map<string, FakeGithubUser>();

  private constructor(
    private readonly server: Server,
    readonly url: string,
    private readonly clientId: string,
  ) {}

  /** Listens on 127.0.0.1 and a free port, for an OAuth app with this client id. */
  static async start(clientId: string): Promise<FakeGithub> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const github = new FakeGithub(server, `http://127.0.0.1:${port}`, clientId);
    server.on('request', (req, res) => {
      github.handle(req, res).catch(() => res.destroy());
    });
    return github;
  }

  /** Sets what the next polls of this device code get. */
  script(deviceCode: string, state: FakeDeviceState): void {
    if (!this.devices.has(deviceCode)) throw new Error(`the fake never issued ${deviceCode}`);
    this.devices.set(deviceCode, state);
  }

  /** The answer the fake gave when it issued this device code. */
  issuedCode(deviceCode: string): FakeDeviceCode | undefined {
    return this.issued.get(deviceCode);
  }

  /** Every GitHub access token the fake handed out. */
  issuedTokens(): string[] {
    return [...this.tokens.keys()];
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', this.url).pathname;
    this.requests.push(`${req.method} ${path}`);
    const form = await readForm(req);
    let answer: JsonAnswer;
    if (!(req.headers['accept'] ?? '').includes('application/json'))
      answer = this.refuse(req, path, 'no Accept: application/json', [406, {}]);
    else if (!req.headers['user-agent'])
      answer = this.refuse(req, path, 'no User-Agent', [403, {}]);
    else answer = this.route(req, path, form);
    res.writeHead(answer[0], { 'content-type': 'application/json; charset=utf-8' });
    res.end(JSON.stringify(answer[1]));
  }

  private route(req: IncomingMessage, path: string, form: URLSearchParams): JsonAnswer {
    const route = `${req.method} ${path}`;
    if (route === 'POST /login/device/code' || route === 'POST /login/oauth/access_token') {
      if (form.get('client_id') !== this.clientId)
        return this.refuse(req, path, `client_id ${form.get('client_id')}`, [
          401,
          { error: 'incorrect_client_credentials' },
        ]);
      return route === 'POST /login/device/code' ? this.deviceCode(form) : this.token(req, form);
    }
    if (route === 'GET /user' || route === 'GET /user/emails') {
      const user = this.tokens.get((req.headers['authorization'] ?? '').replace(/^Bearer /, ''));
      if (!user)
        return this.refuse(req, path, 'unknown token', [401, { message: 'Bad credentials' }]);
      return path === '/user' ? [200, profileOf(user)] : [200, emailsOf(user)];
    }
    return [404, { message: 'Not Found' }];
  }

  private deviceCode(form: URLSearchParams): JsonAnswer {
    if (form.get('scope') !== 'read:user user:email')
      return [400, { error: 'invalid_scope', scope: form.get('scope') }];
    const hex = randomBytes(4).toString('hex').toUpperCase();
    const code: FakeDeviceCode = {
      device_code: randomBytes(20).toString('hex'),
      user_code: `${hex.slice(0, 4)}-${hex.slice(4)}`,
      verification_uri: `${this.url}/login/device`,
      expires_in: 899,
      interval: 6,
    };
    this.issued.set(code.device_code, code);
    this.devices.set(code.device_code, { kind: 'pending' });
    return [200, code];
  }

  private token(req: IncomingMessage, form: URLSearchParams): JsonAnswer {
    if (form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:device_code')
      return this.refuse(req, '/login/oauth/access_token', 'grant_type', [
        200,
        { error: 'unsupported_grant_type' },
      ]);
    const deviceCode = form.get('device_code') ?? '';
    const state = this.devices.get(deviceCode);
    switch (state?.kind) {
      case undefined:
      case 'exchanged':
        return [200, { error: 'incorrect_device_code' }];
      case 'pending':
        return [200, { error: 'authorization_pending' }];
      case 'slow_down':
        return [200, { error: 'slow_down', interval: state.interval }];
      case 'denied':
        return [200, { error: 'access_denied' }];
      case 'expired':
        return [200, { error: 'expired_token' }];
      case 'failing':
        return [502, { message: 'Bad Gateway' }];
      case 'approved': {
        const token = `gho_${randomBytes(18).toString('hex')}`;
        rememberSecret(token);
        this.tokens.set(token, state.user);
        this.devices.set(deviceCode, { kind: 'exchanged' });
        return [200, { access_token: token, token_type: 'bearer', scope: 'read:user,user:email' }];
      }
    }
  }

  private refuse(req: IncomingMessage, path: string, why: string, answer: JsonAnswer): JsonAnswer {
    this.refused.push(`${req.method} ${path}: ${why}`);
    return answer;
  }
}

async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

function profileOf(user: FakeGithubUser): Record<string, unknown> {
  return { id: user.id, login: user.login, email: user.email, name: null, type: 'User' };
}

function emailsOf(user: FakeGithubUser): FakeGithubEmail[] {
  if (user.emails) return user.emails;
  return user.email ? [{ email: user.email, primary: true, verified: true }] : [];
}
