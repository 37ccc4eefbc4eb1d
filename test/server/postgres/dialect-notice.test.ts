import { describe, expect, it } from 'vitest';
import { testDialect } from '../../helpers/database.ts';

const url = process.env.SLIPWAY_TEST_DATABASE_URL;

describe('PostgreSQL run', () => {
  it.skipIf(!url)(
    'runs the server suite on PostgreSQL (skipped: SLIPWAY_TEST_DATABASE_URL is not set)',
    () => {
      expect(testDialect()).toBe('postgres');
    },
  );
});
