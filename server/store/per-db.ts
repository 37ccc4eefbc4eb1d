import type { Kysely } from 'kysely';
import type { Database } from './schema.ts';

/** One value per database handle, made on first use (prepared queries are tied to their handle). */
export function perDb<T>(make: (db: Kysely<Database>) => T): (db: Kysely<Database>) => T {
  const cache = new WeakMap<Kysely<Database>, T>();
  return (db) => {
    let value = cache.get(db);
    if (value === undefined) {
      value = make(db);
      cache.set(db, value);
    }
    return value;
  };
}
