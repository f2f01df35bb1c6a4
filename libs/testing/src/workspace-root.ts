import { fileURLToPath } from 'node:url';

/** The repository's root, where `apps/` lives. */
export const WORKSPACE_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
