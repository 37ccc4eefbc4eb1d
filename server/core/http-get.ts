import { request } from 'node:http';

export interface HostRequest {
  /** Where to connect, e.g. `http://127.0.0.1:3001`. */
  origin: string;
  /** Host header to send: fetch() cannot set it, so the edge is reached with node:http. */
  host: string;
  path?: string;
  method?: string;
  headers?: Record<string, string>;
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** An HTTP request to `origin` carrying another Host header; answers a standard Response. */
export function requestWithHost(opts: HostRequest): Promise<Response> {
  const origin = new URL(opts.origin);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: origin.hostname,
        port: origin.port || 80,
        path: opts.path ?? '/',
        method: opts.method ?? 'GET',
        headers: { ...opts.headers, host: opts.host },
        timeout: opts.timeoutMs ?? 10_000,
        ...(opts.signal ? { signal: opts.signal } : {}),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const headers = new Headers();
          for (const [k, v] of Object.entries(res.headers)) {
            if (Array.isArray(v)) v.forEach((x) => headers.append(k, x));
            else if (v !== undefined) headers.set(k, v);
          }
          const status = res.statusCode ?? 0;
          const body =
            status === 204 || status === 304 || opts.method === 'HEAD' ? null : Buffer.concat(chunks);
          resolve(new Response(body, { status, headers }));
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${opts.timeoutMs ?? 10_000} ms`)));
    req.on('error', reject);
    req.end();
  });
}
