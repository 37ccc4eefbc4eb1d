import type { ColumnDefinitionBuilder } from 'kysely';

/**
 * Everything that differs between SQLite and PostgreSQL lives here, so the rest of the code
 * writes one query for both.
 */
export type DialectName = 'sqlite' | 'postgres';

export interface DialectHelpers {
  name: DialectName;
  /** An auto-incrementing integer primary key column. */
  autoIncrement: (col: ColumnDefinitionBuilder) => ColumnDefinitionBuilder;
  /** SQL type for the auto-incrementing primary key. */
  autoIncrementType: 'integer' | 'bigserial';
}

export function dialectHelpers(name: DialectName): DialectHelpers {
  if (name === 'sqlite') {
    return {
      name,
      autoIncrementType: 'integer',
      autoIncrement: (col) => col.primaryKey().autoIncrement(),
    };
  }
  return { name, autoIncrementType: 'bigserial', autoIncrement: (col) => col.primaryKey() };
}
