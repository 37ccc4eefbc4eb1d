import { createHash } from 'node:crypto';

/** What every API token starts with (`slw_...`): secret scanners and people can tell it apart. */
export const TOKEN_PREFIX = 'slw_';

/** A token as stored: its SHA-256 in hex (the token itself is shown once and never kept). */
export const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');
