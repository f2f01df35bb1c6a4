import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { SecretLookup } from './cnpg-cluster-fields.js';
import { secretValue } from './cnpg-cluster-fields.js';
import type { StandInVolume } from './pod-fields.js';

/**
 * Makes a local directory for each of the pod's volumes under `volumesDir`, by name:
 * `emptyDir` an empty directory anyone may write (0777, as the kubelet makes it), `secret`
 * one file per key (or per `items` entry, at its path) with the mode asked (default 0644).
 * What the kubelet does differently: it mounts them (tmpfs for Secrets) into the
 * container's own filesystem, updates Secret volumes when the Secret changes, and waits
 * (retrying) for a Secret that does not exist yet; other volume types are not served here.
 */
export async function makeVolumes(
  volumes: readonly StandInVolume[],
  volumesDir: string,
  secrets: SecretLookup,
): Promise<Map<string, string>> {
  const dirs = new Map<string, string>();
  for (const volume of volumes) {
    if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(volume.name))
      throw new Error(`not a volume name: '${volume.name}'`);
    const dir = join(volumesDir, volume.name);
    await mkdir(dir, { recursive: true });
    if (volume.emptyDir) await chmod(dir, 0o777);
    else if (volume.secret) await writeSecretFiles(volume.secret, dir, secrets);
    else throw new Error(`volume '${volume.name}': only emptyDir and secret volumes are served`);
    dirs.set(volume.name, dir);
  }
  return dirs;
}

async function writeSecretFiles(
  source: NonNullable<StandInVolume['secret']>,
  dir: string,
  secrets: SecretLookup,
): Promise<void> {
  const name = source.secretName ?? '';
  const secret = secrets(name);
  if (!secret) throw new Error(`Secret '${name}' not found`);
  const keys = [
    ...new Set([...Object.keys(secret.data ?? {}), ...Object.keys(secret.stringData ?? {})]),
  ];
  const items = source.items ?? keys.map((key) => ({ key, path: key, mode: undefined }));
  for (const item of items) {
    if (item.path.split('/').some((part) => part === '..' || part === ''))
      throw new Error(`secret volume path '${item.path}' is not a relative path`);
    const file = join(dir, item.path);
    await mkdir(dirname(file), { recursive: true });
    const mode = item.mode ?? source.defaultMode ?? 0o644;
    await writeFile(file, secretValue(secrets, name, item.key), { mode });
    await chmod(file, mode);
  }
}
