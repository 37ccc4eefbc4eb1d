import { sql } from 'kysely';
import { connect } from './connection.ts';
import { echoKey, quoteIdent, takeEcho, type PgNotifierState } from './state.ts';

/** Notifier.publish: `localNow` as in PublishOptions. */
export function publish(
  st: PgNotifierState,
  channel: string,
  payload: string,
  localNow: boolean | undefined,
): void {
  if (st.closed) return;
  let echo: string | undefined;
  if (localNow) {
    st.local.emit(channel, payload);
    // Only a channel listened to now echoes back.
    if (st.client && st.listening.has(channel)) {
      echo = echoKey(channel, payload);
      st.echoes.set(echo, (st.echoes.get(echo) ?? 0) + 1);
    }
  }
  const sent = sql`select pg_notify(${channel}, ${payload})`
    .execute(st.opts.db)
    .catch((err: unknown) => {
      st.onError(err, 'notify failed');
      if (echo) takeEcho(st, echo);
    })
    .finally(() => st.sending.delete(sent));
  st.sending.add(sent);
}

export function subscribe(
  st: PgNotifierState,
  channel: string,
  listener: (payload: string | null) => void,
): () => void {
  st.local.on(channel, listener);
  if (!st.channels.has(channel)) {
    st.channels.add(channel);
    if (st.client) listen(st, st.client, channel);
    else if (!st.connecting && !st.timer) void connect(st);
  }
  return () => void st.local.off(channel, listener);
}

/** LISTENs to a channel subscribed once the connection was open; ready() waits for it. */
function listen(st: PgNotifierState, c: NonNullable<PgNotifierState['client']>, channel: string): void {
  const listening: Promise<void> = c
    .query(`LISTEN ${quoteIdent(channel)}`)
    .then(
      () => {
        if (st.client === c) st.listening.add(channel);
      },
      (err: unknown) => st.onError(err, 'listen failed'),
    )
    .finally(() => st.listens.delete(listening));
  st.listens.add(listening);
}
