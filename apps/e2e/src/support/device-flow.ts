import type { DeviceAuthorization, User } from '@pgcloud/contracts';
import type { ApiClient, ApiResponse } from '@pgcloud/testing';
import { expectData } from './assertions.js';

/** Any answer of POST /auth/device/token: waiting, slow down, or the token. */
export type TokenAnswer = {
  status?: string;
  interval?: number;
  access_token?: string;
  token_type?: string;
  user?: User;
};

/** POST /auth/device, expecting the codes. */
export async function startDevice(api: ApiClient): Promise<DeviceAuthorization> {
  return expectData<DeviceAuthorization>(await api.post('/auth/device'), 200);
}

/** One poll of POST /auth/device/token. */
export function poll(api: ApiClient, deviceCode: string): Promise<ApiResponse<unknown>> {
  return api.post<unknown>('/auth/device/token', { device_code: deviceCode });
}

/** Waits, for tests that must let time pass (intervals, expiry, refills). */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
