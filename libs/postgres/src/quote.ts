/** Quotes an SQL identifier (a schema, database or role name) for PostgreSQL. */
export function quoteIdent(name: string): string {
  if (name.length === 0 || name.includes('\0'))
    throw new Error('an identifier must be non-empty and free of NUL');
  return `"${name.replaceAll('"', '""')}"`;
}
