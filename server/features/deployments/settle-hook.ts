import type { Kysely } from 'kysely';
import type { Database } from '../../platform/store/schema.ts';

/**
 * What a paid operation hands to the service it runs: the service calls `before` first thing in
 * its transaction and `after` once the resource exists, so operation and payment commit together.
 */
export interface SettleHook {
  before(tx: Kysely<Database>): Promise<void>;
  after(tx: Kysely<Database>, resourceId: string): Promise<void>;
}
