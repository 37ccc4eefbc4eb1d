import type { IncomingMessage, ServerResponse } from 'node:http';

const escapeHtml = (s: string) =>
  s.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c,
  );

/** A small self-contained HTML page; `title` and `message` are plain text and get escaped. */
export function renderPage(status: number, title: string, message: string): string {
  const t = escapeHtml(title);
  return (
    `<!doctype html><html lang="en"><head><meta charset="utf-8">` +
    `<meta name="viewport" content="width=device-width,initial-scale=1"><title>${status}: ${t}</title>` +
    `<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:15vh auto;padding:0 1rem;color:#222}` +
    `h1{font-size:1.4rem}code{background:#f3f3f3;padding:0 .25rem}small{color:#777}</style></head>` +
    `<body><h1>${t}</h1><p>${escapeHtml(message)}</p><p><small>${status} · Slipway edge</small></p></body></html>\n`
  );
}

/**
 * Sends one of the edge's own pages (unknown host, building, suspended, ...). They are never
 * cached: the same URL serves the app as soon as its state changes. Returns the body bytes sent.
 */
export function sendPage(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  title: string,
  message: string,
  headers: Record<string, string> = {},
): number {
  const body = Buffer.from(renderPage(status, title, message));
  res.writeHead(status, {
    'Content-Type': 'text/html; charset=utf-8',
    'Content-Length': body.length,
    'Cache-Control': 'no-store',
    ...headers,
  });
  if (req.method === 'HEAD') {
    res.end();
    return 0;
  }
  res.end(body);
  return body.length;
}
