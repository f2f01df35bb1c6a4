import 'reflect-metadata';
import { readFileSync } from 'node:fs';
import { plainToInstance } from 'class-transformer';
import { getMetadataStorage, validateSync } from 'class-validator';

/** Thrown at start when a setting is missing or bad; names every variable at fault. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  ${problems.join('\n  ')}`);
    this.name = 'ConfigError';
  }
}

/**
 * Reads an app's settings from the environment into its typed class: the class's
 * property initialisers are the defaults, its class-validator decorators the rules. Any
 * setting may be given as `<NAME>_FILE` instead, the path of a file holding its value (a
 * Docker or Kubernetes secret), so that the process's environment holds no secret.
 */
export function validateEnv<T extends object>(
  envClass: new () => T,
  env: Record<string, string | undefined> = process.env,
): T {
  const defined = Object.fromEntries(
    Object.entries(env).filter(([, v]) => v !== undefined && v !== ''),
  );
  const fromFiles = settingsFromFiles(envClass, defined);
  if (fromFiles.problems.length > 0) throw new ConfigError(fromFiles.problems);
  const settings = { ...defined, ...fromFiles.values };
  const config = plainToInstance(envClass, settings, {
    enableImplicitConversion: true,
    exposeDefaultValues: true,
  });
  const errors = validateSync(config, { whitelist: false, forbidUnknownValues: true });
  if (errors.length > 0) {
    throw new ConfigError(
      errors.map(
        (e) =>
          `${e.property}=${shownValue(e.property, settings[e.property])}: ${Object.values(e.constraints ?? {}).join('; ')}`,
      ),
    );
  }
  return config;
}

const FILE_SUFFIX = '_FILE';

/**
 * The settings of `envClass` given as `<NAME>_FILE`: each file's text less one final line
 * break. A setting given both ways, or a file that cannot be read, is a problem.
 */
function settingsFromFiles(
  envClass: new () => object,
  env: Record<string, string | undefined>,
): { values: Record<string, string>; problems: string[] } {
  const names = new Set([
    ...Object.keys(new envClass()),
    ...getMetadataStorage()
      .getTargetValidationMetadatas(envClass, '', true, false)
      .map((rule) => rule.propertyName),
  ]);
  const values: Record<string, string> = {};
  const problems: string[] = [];
  for (const [variable, path] of Object.entries(env)) {
    const name = variable.slice(0, -FILE_SUFFIX.length);
    if (!variable.endsWith(FILE_SUFFIX) || !names.has(name) || names.has(variable) || !path)
      continue;
    if (env[name] !== undefined) {
      problems.push(`${variable}=${JSON.stringify(path)}: ${name} is set too; set only one`);
      continue;
    }
    try {
      values[name] = readFileSync(path, 'utf8').replace(/\r?\n$/, '');
    } catch (err) {
      const reason = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
      problems.push(`${variable}=${JSON.stringify(path)}: cannot be read (${reason})`);
    }
  }
  return { values, problems };
}

// Names of settings whose whole value is a secret (a path to a secret's file is not one).
const SECRET_NAME = /PASSWORD|SECRET|TOKEN|_KEY($|_)|CREDENTIAL/i;
const PATH_NAME = /_(FILE|PATH|DIR)$/i;
// The password of a URL's user information, as in postgres://user:password@host.
const URL_PASSWORD = /(\/\/[^/@\s:]*:)[^/@\s]*@/g;

/**
 * A setting's value as an error may show it: secrets by name are never shown, and the
 * password of any URL in a value is masked (docs/api/errors.md#the-edge).
 */
export function shownValue(name: string, value: string | undefined): string {
  if (value === undefined) return 'null';
  if (SECRET_NAME.test(name) && !PATH_NAME.test(name))
    return `(secret, ${value.length} characters)`;
  return JSON.stringify(value.replace(URL_PASSWORD, '$1***@'));
}

/** Parses `id=name,id=name` lists such as REGIONS. */
export function parsePairs(value: string): { id: string; name: string }[] {
  return value
    .split(',')
    .map((pair) => pair.trim())
    .filter((pair) => pair.length > 0)
    .map((pair) => {
      const eq = pair.indexOf('=');
      return eq < 0
        ? { id: pair, name: pair }
        : { id: pair.slice(0, eq).trim(), name: pair.slice(eq + 1).trim() };
    });
}
