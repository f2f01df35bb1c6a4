/** Quotes an SQL identifier (a schema, database or role name) for PostgreSQL. */
export function quoteIdent(name: string): string {
  if (name.length === 0 || name.includes('\0'))
    throw new Error('an identifier must be non-empty and free of NUL');
  return `"${name.replaceAll('"', '""')}"`;
}

/**
 * Quotes a string as an SQL literal, for statements that take no bind parameters
 * (CREATE ROLE ... PASSWORD): quotes doubled, and backslashes doubled in an E'' literal
 * so the result means the same whatever standard_conforming_strings says.
 */
export function quoteLiteral(value: string): string {
  if (value.includes('\0')) throw new Error('an SQL literal cannot hold NUL');
  const quoted = `'${value.replaceAll("'", "''")}'`;
  return value.includes('\\') ? `E${quoted.replaceAll('\\', '\\\\')}` : quoted;
}
