import pg from 'pg';
import { echoKey, quoteIdent, takeEcho, type PgNotifierState } from './state.ts';

/** Opens the listening connection unless it is being opened; resolves when that try ends. */
export function connect(st: PgNotifierState): Promise<void> {
  if (st.closed) return Promise.resolve();
  st.connecting ??= open(st).finally(() => {
    st.connecting = null;
  });
  return st.connecting;
}

function scheduleReconnect(st: PgNotifierState): void {
  if (st.closed || st.timer) return;
  st.timer = setTimeout(() => {
    st.timer = null;
    void connect(st);
  }, st.delay);
  st.timer.unref();
  st.delay = Math.min(st.delay * 2, st.maxRetryMs);
}

async function open(st: PgNotifierState): Promise<void> {
  const c = new pg.Client({ connectionString: st.opts.connectionString });
  const drop = watch(st, c);
  try {
    await c.connect();
    // A channel subscribed meanwhile joins the set and this loop (sets iterate what is added).
    for (const ch of st.channels) await c.query(`LISTEN ${quoteIdent(ch)}`);
    if (st.closed) {
      await c.end().catch(() => undefined);
      return;
    }
    st.client = c;
    st.listening = new Set(st.channels);
    st.delay = st.retryMs;
    // Anything sent while we were away is lost: tell the listeners to re-check.
    if (st.everConnected) for (const ch of st.channels) st.local.emit(ch, null);
    st.everConnected = true;
  } catch (err) {
    drop(err);
  }
}

/**
 * Hands the connection's notifications to this process's listeners (less the echoes they heard
 * already); returns what drops it, which the connection's error or end calls too.
 */
function watch(st: PgNotifierState, c: pg.Client): (err?: unknown) => void {
  let dropped = false;
  const drop = (err?: unknown) => {
    if (dropped) return;
    dropped = true;
    if (st.client === c) {
      st.client = null;
      // Nothing more comes on this connection; the reconnect tells listeners to re-check.
      st.listening = new Set();
      st.echoes.clear();
    }
    if (err) st.onError(err, 'notification connection lost');
    void c.end().catch(() => undefined);
    scheduleReconnect(st);
  };
  c.on('error', drop);
  c.on('end', () => drop());
  c.on('notification', (msg) => {
    if (!st.channels.has(msg.channel)) return;
    const payload = msg.payload ?? '';
    if (!takeEcho(st, echoKey(msg.channel, payload))) st.local.emit(msg.channel, payload);
  });
  return drop;
}

/** Resolves once every subscription made so far is live (Notifier.ready). */
export async function ready(st: PgNotifierState): Promise<void> {
  while (!st.closed && st.channels.size > 0 && !st.client) {
    if (st.connecting) await st.connecting;
    else await new Promise((r) => setTimeout(r, 20));
  }
  // A channel subscribed once the connection was open is live when its LISTEN has run: a
  // NOTIFY sent before that is not heard.
  await Promise.all(st.listens);
}

export async function close(st: PgNotifierState): Promise<void> {
  st.closed = true;
  await Promise.all(st.sending);
  if (st.timer) clearTimeout(st.timer);
  await st.connecting?.catch(() => undefined);
  const c = st.client;
  st.client = null;
  st.local.removeAllListeners();
  await c?.end().catch(() => undefined);
}
