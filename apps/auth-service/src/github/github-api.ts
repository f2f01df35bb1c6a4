import { Injectable } from '@nestjs/common';
import type { DeviceAuthorization } from '@pgcloud/contracts';
import { DomainError } from '@pgcloud/contracts';
import { AuthServiceConfig } from '../config.js';
import type { GithubPollAnswer } from './github-answers.js';
import {
  deviceAuthorizationFrom,
  githubUserFrom,
  noreplyEmail,
  pollAnswerFrom,
  primaryVerifiedEmail,
} from './github-answers.js';

/** The scopes pgcloud asks for: who the user is and their verified email. */
const SCOPE = 'read:user user:email';
const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

/** A GitHub user as pgcloud keys and shows it. */
export interface GithubIdentity {
  id: number;
  login: string;
  email: string;
}

/** GitHub could not be reached or failed (5xx): the client may simply try again. */
export class GithubUnavailable extends DomainError {
  constructor(readonly reason: string) {
    super('SERVICE_UNAVAILABLE', 'GitHub is not answering; try again in a moment.');
  }
}

/** The HTTP client GitHub is reached with: Node's fetch, which unit tests replace. */
@Injectable()
export class HttpFetch {
  fetch(url: string, init: RequestInit): Promise<Response> {
    return fetch(url, init);
  }
}

interface GithubResponse {
  status: number;
  body: unknown;
}

interface GithubRequest {
  method: 'GET' | 'POST';
  form?: Record<string, string>;
  bearer?: string;
}

/**
 * GitHub's device flow and user endpoints as pgcloud uses them. A GitHub token passes
 * through here for one poll only: it is never stored and never put in a message or log.
 */
@Injectable()
export class GithubApi {
  constructor(
    private readonly config: AuthServiceConfig,
    private readonly http: HttpFetch,
  ) {}

  async requestDeviceCode(signal: AbortSignal): Promise<DeviceAuthorization> {
    const answer = await this.send(this.config.GITHUB_BASE_URL, '/login/device/code', signal, {
      method: 'POST',
      form: { client_id: this.clientId(), scope: SCOPE },
    });
    if (answer.status !== 200) throw refused('/login/device/code', answer);
    return deviceAuthorizationFrom(answer.body);
  }

  async exchangeDeviceCode(deviceCode: string, signal: AbortSignal): Promise<GithubPollAnswer> {
    const answer = await this.send(
      this.config.GITHUB_BASE_URL,
      '/login/oauth/access_token',
      signal,
      {
        method: 'POST',
        form: { client_id: this.clientId(), device_code: deviceCode, grant_type: DEVICE_GRANT },
      },
    );
    return pollAnswerFrom(answer.body);
  }

  /** Who holds the GitHub token: /user, and /user/emails when the email is not public. */
  async identity(githubToken: string, signal: AbortSignal): Promise<GithubIdentity> {
    const api = this.config.GITHUB_API_URL;
    const user = await this.send(api, '/user', signal, { method: 'GET', bearer: githubToken });
    if (user.status !== 200) throw refused('/user', user);
    const { id, login, email } = githubUserFrom(user.body);
    if (email) return { id, login, email };
    const emails = await this.send(api, '/user/emails', signal, {
      method: 'GET',
      bearer: githubToken,
    });
    // Without the user:email grant GitHub refuses the list; the noreply address still works.
    const primary = emails.status === 200 ? primaryVerifiedEmail(emails.body) : null;
    return { id, login, email: primary ?? noreplyEmail(login) };
  }

  private clientId(): string {
    const clientId = this.config.GITHUB_CLIENT_ID;
    if (!clientId) throw new Error('GITHUB_CLIENT_ID is not set');
    return clientId;
  }

  private async send(
    base: string,
    path: string,
    signal: AbortSignal,
    request: GithubRequest,
  ): Promise<GithubResponse> {
    const headers: Record<string, string> = { accept: 'application/json', 'user-agent': 'pgcloud' };
    if (request.bearer) headers['authorization'] = `Bearer ${request.bearer}`;
    let status: number;
    let text: string;
    try {
      const response = await this.http.fetch(`${base.replace(/\/+$/, '')}${path}`, {
        method: request.method,
        headers,
        body: request.form ? new URLSearchParams(request.form) : undefined,
        signal,
      });
      status = response.status;
      text = await response.text();
    } catch (err) {
      throw new GithubUnavailable(`${request.method} ${path}: ${failureOf(err)}`);
    }
    if (status >= 500) throw new GithubUnavailable(`${request.method} ${path} answered ${status}`);
    return { status, body: parseJson(text) };
  }
}

/** GitHub refused a request pgcloud makes right: the deployment's settings are wrong. */
function refused(path: string, answer: GithubResponse): Error {
  const body = answer.body as { error?: unknown; message?: unknown } | null;
  const reason = typeof body?.error === 'string' ? body.error : body?.message;
  return new Error(
    `GitHub answered ${path} with ${answer.status}${typeof reason === 'string' ? ` (${reason})` : ''}; check GITHUB_CLIENT_ID, GITHUB_BASE_URL and GITHUB_API_URL`,
  );
}

function failureOf(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  if (err.name === 'TimeoutError' || err.name === 'AbortError') return 'no answer in time';
  const code = (err.cause as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? code : err.message;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}
