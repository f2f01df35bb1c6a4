import type { Client } from '@pgcloud/api-client';
import type { DeviceAuthorization, User } from '@pgcloud/contracts';
import type { ApiClient, ApiResponse, SuccessBody } from './api-client.js';
import { testApi } from './test-api.js';

/** A signed-in caller: the API clients carrying the token, and who it is. */
export interface SignedIn {
  api: ApiClient;
  /** The generated client with the token (and the same client address as `api`). */
  client: Client;
  token: string;
  user: User;
}

/** What a browser keeps after loading the /device form: its cookie and the hidden token. */
export interface DeviceFormSession {
  cookie: string;
  formToken: string;
}

/** Loads the /device form as a browser does: the anti-forgery cookie and hidden field. */
export async function openDeviceForm(api: ApiClient): Promise<DeviceFormSession> {
  const page = await api.get<string>('/device');
  const cookie = page.headers.getSetCookie().map((line) => line.split(';')[0] ?? '')[0];
  const formToken = /name="form_token" value="([^"]+)"/.exec(String(page.body))?.[1];
  if (page.status !== 200 || !cookie || !formToken)
    throw new Error(`GET /device answered ${page.status} without the form's token and cookie`);
  return { cookie, formToken };
}

/**
 * Posts the /device verification form as a browser would: loaded first (its cookie and
 * hidden token), then submitted. `session` posts with a form loaded earlier instead.
 */
export async function submitDeviceForm(
  api: ApiClient,
  form: { user_code: string; login: string; email?: string; action: 'approve' | 'deny' },
  session?: DeviceFormSession,
): Promise<ApiResponse<string>> {
  const { cookie, formToken } = session ?? (await openDeviceForm(api));
  const fields = Object.entries({ ...form, form_token: formToken }).filter(
    (entry): entry is [string, string] => entry[1] !== undefined,
  );
  return api.request<string>('POST', '/device', {
    rawBody: new URLSearchParams(fields).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
  });
}

/** Signs in through the whole device flow: request, approve on the page, poll for the token. */
export async function signIn(api: ApiClient, login: string, email?: string): Promise<SignedIn> {
  const anonymous = api.withToken(undefined);
  const started = await anonymous.post<SuccessBody<DeviceAuthorization>>('/auth/device');
  if (started.status !== 200)
    throw new Error(
      `POST /auth/device answered ${started.status}: ${JSON.stringify(started.body)}`,
    );
  const { device_code, user_code } = started.body.data;
  const page = await submitDeviceForm(anonymous, { user_code, login, email, action: 'approve' });
  if (page.status !== 200) throw new Error(`POST /device answered ${page.status}: ${page.body}`);
  const polled = await anonymous.post<SuccessBody<{ access_token?: string; user?: User }>>(
    '/auth/device/token',
    { device_code },
  );
  const { access_token, user } = polled.body.data;
  if (!access_token || !user)
    throw new Error(`no token after approval: ${JSON.stringify(polled.body)}`);
  const headers = api.clientIp ? { 'x-forwarded-for': api.clientIp } : undefined;
  return {
    api: api.withToken(access_token),
    client: testApi(api.baseUrl, access_token, headers),
    token: access_token,
    user,
  };
}
