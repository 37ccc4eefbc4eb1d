import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../../api/errors.ts';
import type { Actor, Deps } from '../deps/deps.ts';
import { isUniqueViolation } from '../store/errors.ts';
import { decodeJson } from '../../core/json-column.ts';
import { z } from 'zod';

/** The request header: one key per logical operation, chosen by the client. */
export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';
/** Set on an answer that repeats a stored one. */
export const REPLAYED_HEADER = 'Idempotent-Replayed';

/** First pause of a duplicate waiting for the first request with its key (doubling to 200 ms). */
const POLL_MS = 20;
/** An unfinished first request this old (its process died) is presumed gone and its key taken over. */
export const IDEMPOTENCY_LEASE_MS = 120_000;

/** The headers a replay repeats; request ids and rate-limit headers are the replay's own. */
const STORED_HEADERS = [
  'content-type',
  'location',
  'payment-receipt',
  'cache-control',
  'deprecation',
  'sunset',
  'link',
];

const KEY_SHAPE = /^[\x20-\x7e]{1,255}$/;

interface Claim {
  userId: string;
  key: string;
  createdAt: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The Idempotency-Key this request holds until its answer is stored (or the key released). */
    idempotencyClaim: Claim | null;
  }
}

/** JSON with object keys sorted, so that `{a,b}` and `{b,a}` are the same body. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

export const bodyHash = (body: unknown) => createHash('sha256').update(canonicalJson(body)).digest('hex');

function readKey(req: FastifyRequest): string | undefined {
  const raw = req.headers[IDEMPOTENCY_KEY_HEADER];
  if (raw === undefined) return undefined;
  const key = (Array.isArray(raw) ? raw.join(',') : raw).trim();
  if (!KEY_SHAPE.test(key)) {
    throw ApiError.validation([
      { path: 'Idempotency-Key', message: 'must be 1 to 255 printable ASCII characters, e.g. a UUID' },
    ]);
  }
  return key;
}

/** The headers kept with an answer, to send again on a replay. */
const StoredHeaders = z.record(z.string(), z.string());

async function replay(reply: FastifyReply, status: number, headers: string | null, body: string | null) {
  const stored = headers === null ? {} : decodeJson(StoredHeaders, headers, 'A kept answer’s headers');
  for (const [name, value] of Object.entries(stored)) {
    void reply.header(name, value);
  }
  void reply.header(REPLAYED_HEADER, 'true');
  await reply.status(status).send(body ?? '');
}

/**
 * Runs before a POST handler. Without an `Idempotency-Key` it does nothing ('run'). With one, it
 * claims (user, key) by inserting an in-progress row (the primary key lets only one request in),
 * or answers for the request that holds it: the stored answer again when that one finished
 * ('replayed'), after waiting for it when it is still running; CONFLICT when the key came with
 * another method, path or body, or when the first request outlasts the wait.
 */
async function beginIdempotentRequest(
  deps: Deps,
  actor: Actor,
  req: FastifyRequest,
  reply: FastifyReply,
): Promise<'run' | 'replayed'> {
  const key = readKey(req);
  if (key === undefined) return 'run';
  const fingerprint = { method: req.method, path: req.url, body_hash: bodyHash(req.body) };
  const deadline = Date.now() + deps.config.idempotencyWaitMs;
  for (let poll = POLL_MS; ; poll = Math.min(poll * 2, 200)) {
    const now = deps.clock.now();
    // Keys live SLIPWAY_IDEMPOTENCY_TTL (24 hours); past that, the same key is as good as new.
    await deps.db
      .deleteFrom('idempotency_keys')
      .where('user_id', '=', actor.userId)
      .where('expires_at', '<=', now.toISOString())
      .execute();
    const claim = { userId: actor.userId, key, createdAt: now.toISOString() };
    try {
      await deps.db
        .insertInto('idempotency_keys')
        .values({
          user_id: claim.userId,
          key,
          ...fingerprint,
          state: 'in-progress',
          status: null,
          response_body: null,
          response_headers: null,
          created_at: claim.createdAt,
          expires_at: new Date(now.getTime() + deps.config.idempotencyTtlMs).toISOString(),
        })
        .execute();
      req.idempotencyClaim = claim;
      return 'run';
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
    }
    const row = await deps.db
      .selectFrom('idempotency_keys')
      .selectAll()
      .where('user_id', '=', actor.userId)
      .where('key', '=', key)
      .executeTakeFirst();
    // Released (a 5xx or a 402) between our insert and this read: try again at once.
    if (!row) continue;
    checkSameRequest(key, row, fingerprint);
    if (row.state === 'done') {
      const body = row.response_body === null ? null : deps.cipher.decrypt(row.response_body);
      await replay(reply, row.status ?? 200, row.response_headers, body);
      return 'replayed';
    }
    if (now.getTime() - Date.parse(row.created_at) > IDEMPOTENCY_LEASE_MS) {
      // The first request's process died holding the key: free it and claim it on the next turn.
      await deps.db
        .deleteFrom('idempotency_keys')
        .where('user_id', '=', actor.userId)
        .where('key', '=', key)
        .where('state', '=', 'in-progress')
        .where('created_at', '=', row.created_at)
        .execute();
      continue;
    }
    if (Date.now() + poll > deadline) {
      throw ApiError.conflict(
        `A request with Idempotency-Key "${key}" is in progress; retry in a few seconds to get its answer`,
      );
    }
    await sleep(poll);
  }
}

/** Throws CONFLICT unless the key's row was stored for the same method, path and body. */
function checkSameRequest(
  key: string,
  row: { method: string; path: string; body_hash: string },
  fingerprint: { method: string; path: string; body_hash: string },
): void {
  if (
    row.method !== fingerprint.method ||
    row.path !== fingerprint.path ||
    row.body_hash !== fingerprint.body_hash
  ) {
    throw ApiError.conflict(
      `Idempotency-Key "${key}" was already used for ${row.method} ${row.path} with a different request; ` +
        'use a new key for a new request',
    );
  }
}

async function release(deps: Deps, claim: Claim): Promise<void> {
  await deps.db
    .deleteFrom('idempotency_keys')
    .where('user_id', '=', claim.userId)
    .where('key', '=', claim.key)
    .where('state', '=', 'in-progress')
    .where('created_at', '=', claim.createdAt)
    .execute();
}

/**
 * Stores the answer of a claimed request, or releases the key. 5xx answers are not stored (the
 * request may well succeed when repeated), and neither is 402: the client repeats the same
 * request, with the same key, once it has paid.
 */
async function finish(deps: Deps, claim: Claim, reply: FastifyReply, payload: unknown): Promise<void> {
  const status = reply.statusCode;
  const body =
    typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString('utf8') : null;
  if (status >= 500 || status === 402 || (body === null && payload !== null && payload !== undefined)) {
    await release(deps, claim);
    return;
  }
  const headers: Record<string, string> = {};
  for (const name of STORED_HEADERS) {
    const value = reply.getHeader(name);
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : String(value);
  }
  // Encrypted: an answer may hold a secret shown once (a new API token), and the store must not
  // keep it readable for a day. A replay is the only way a client that lost the answer gets it.
  await deps.db
    .updateTable('idempotency_keys')
    .set({
      state: 'done',
      status,
      response_body: deps.cipher.encrypt(body ?? ''),
      response_headers: JSON.stringify(headers),
    })
    .where('user_id', '=', claim.userId)
    .where('key', '=', claim.key)
    .where('state', '=', 'in-progress')
    .where('created_at', '=', claim.createdAt)
    .execute();
}

/**
 * Route hooks of every authenticated POST: `preHandler` claims the key (or answers with the
 * stored answer); `onSend` sees the final status and body of successes and errors alike;
 * `onResponse` releases a key whose answer never went through `onSend` (a hijacked reply).
 */
export function idempotencyHooks(deps: Deps) {
  return {
    preHandler: async (req: FastifyRequest, reply: FastifyReply) => {
      if ((await beginIdempotentRequest(deps, req.actor, req, reply)) === 'replayed') return reply;
    },
    onSend: async (req: FastifyRequest, reply: FastifyReply, payload: unknown) => {
      const claim = req.idempotencyClaim;
      if (!claim) return payload;
      req.idempotencyClaim = null;
      try {
        await finish(deps, claim, reply, payload);
      } catch (err) {
        // The answer still goes out; the key is freed so a retry runs rather than hanging.
        req.log.error({ err }, 'could not store the idempotent answer');
        await release(deps, claim).catch(() => undefined);
      }
      return payload;
    },
    onResponse: async (req: FastifyRequest) => {
      const claim = req.idempotencyClaim;
      if (!claim) return;
      req.idempotencyClaim = null;
      await release(deps, claim).catch((err: unknown) => req.log.error({ err }, 'could not release a key'));
    },
  };
}
