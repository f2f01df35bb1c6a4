/** A postgresql.conf setting's value: numbers as they are, strings quoted. */
export type SettingValue = string | number;

/** The file pgcloud's clusters include last from postgresql.conf, so its settings win. */
export const SERVER_CONF_FILE = 'pgcloud.conf';

// TYPE, DATABASE, USER, ADDRESS: aligned so that a person reading the file sees columns.
const HBA_COLUMN_WIDTHS = [8, 12, 20, 14];

/**
 * Renders settings as postgresql.conf text under a `# header` line, quoting strings the
 * way the file expects; a line break in a value, which would add a setting, is refused.
 */
export function renderConf(settings: Record<string, SettingValue>, header: string): string {
  const lines = Object.entries(settings).map(([name, value]) => {
    if (!/^[a-z_][a-z0-9_.]*$/.test(name)) throw new Error(`not a setting name: ${name}`);
    return `${name} = ${typeof value === 'number' ? value : confString(value)}`;
  });
  return `# ${header}\n${lines.join('\n')}\n`;
}

function confString(value: string): string {
  if (/[\n\r\0]/.test(value)) throw new Error('a setting value cannot hold line breaks or NUL');
  return `'${value.replaceAll('\\', '\\\\').replaceAll("'", "''")}'`;
}

/** Renders pg_hba.conf rules (type, database, user, address, method) in aligned columns. */
export function renderHbaRules(rules: readonly (readonly string[])[], header: string): string {
  const lines = rules.map((rule) => {
    if (rule.some((cell) => /\s/.test(cell.trim()) || cell.includes('#')))
      throw new Error(`not a pg_hba.conf rule: ${rule.join(' ')}`);
    return rule
      .map((cell, i) => cell.padEnd(HBA_COLUMN_WIDTHS[i] ?? 0))
      .join(' ')
      .trimEnd();
  });
  return `# ${header}\n${lines.join('\n')}\n`;
}
