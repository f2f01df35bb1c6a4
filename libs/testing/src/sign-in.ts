import type { DeviceAuthorization, User } from '@pgcloud/contracts';
import type { ApiClient, ApiResponse, SuccessBody } from './api-client.js';

/** A signed-in caller: the API client carrying the token, and who it is. */
export interface SignedIn {
  api: ApiClient;
  token: string;
  user: User;
}

/** Posts the /device verification form as a browser would. */
export function submitDeviceForm(
  api: ApiClient,
  form: { user_code: string; login: string; email?: string; action: 'approve' | 'deny' },
): Promise<ApiResponse<string>> {
  const fields = Object.entries(form).filter(
    (entry): entry is [string, string] => entry[1] !== undefined,
  );
  return api.request<string>('POST', '/device', {
    rawBody: new URLSearchParams(fields).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
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
  return { api: api.withToken(access_token), token: access_token, user };
}
