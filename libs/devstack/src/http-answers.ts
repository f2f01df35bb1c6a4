/** True when a local daemon answers HTTP at `baseUrl` (401 without a token is an answer). */
export async function daemonAnswers(baseUrl: string): Promise<boolean> {
  try {
    const response = await fetch(`${baseUrl}/databases`, { signal: AbortSignal.timeout(2000) });
    return response.status === 401;
  } catch {
    return false;
  }
}

/** True when a gateway answers its health route at `baseUrl`. */
export async function gatewayAnswers(baseUrl: string): Promise<boolean> {
  try {
    const response = await fetch(`${baseUrl}/`, { signal: AbortSignal.timeout(2000) });
    return response.status === 200;
  } catch {
    return false;
  }
}
