const SECRET_FIELDS = [
  'access_token',
  'device_code',
  'password',
  'download_url',
  'connection_string',
  // A webhook endpoint's signing secret.
  'secret',
];
const secrets = new Set<string>();

/** Every secret an API answer handed to this process, for the log scan at the end of e2e. */
export function seenSecrets(): ReadonlySet<string> {
  return secrets;
}

/** Adds a secret handed out outside the API (such as a fake provider's token) to that scan. */
export function rememberSecret(value: string): void {
  secrets.add(value);
}

/** Remembers the secrets in the `data` of an API answer's parsed body, for that scan. */
export function rememberAnswerSecrets(body: unknown): void {
  const data = (body as { data?: unknown } | undefined)?.data;
  if (typeof data !== 'object' || data === null) return;
  for (const field of SECRET_FIELDS) {
    const value = (data as Record<string, unknown>)[field];
    if (typeof value === 'string' && value.length >= 8) secrets.add(value);
  }
  // A pre-signed URL's signature is a secret on its own too: it must not reach any log.
  const download = (data as Record<string, unknown>)['download_url'];
  if (typeof download === 'string') {
    const signature = new URL(download).searchParams.get('X-Amz-Signature');
    if (signature) secrets.add(signature);
  }
  // A connection string's password is a secret on its own too.
  const connection = (data as Record<string, unknown>)['connection_string'];
  if (typeof connection === 'string') {
    const password = decodeURIComponent(new URL(connection).password);
    if (password.length >= 8) secrets.add(password);
  }
}
