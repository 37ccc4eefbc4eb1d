import type { Alert, Health, Metrics, MetricsPeriod } from '../../../api/schemas/monitoring.ts';
import { html } from '../html.ts';
import { age, type View } from '../layout.ts';
import { projectShell, type ProjectContext } from './project-shell.ts';

const PERIODS: MetricsPeriod[] = ['1h', '24h', '7d', '30d'];

const bytes = (n: number) =>
  n < 1024
    ? `${n} B`
    : n < 1024 ** 2
      ? `${(n / 1024).toFixed(1)} KiB`
      : n < 1024 ** 3
        ? `${(n / 1024 ** 2).toFixed(1)} MiB`
        : `${(n / 1024 ** 3).toFixed(2)} GiB`;

/** Horizontal bars as inline SVG: no script, readable by screen readers through its table twin. */
function bars(title: string, rows: { label: string; value: number; text: string }[]) {
  const max = Math.max(1, ...rows.map((r) => r.value));
  const h = 26;
  return html`<figure class="chart">
    <figcaption>${title}</figcaption>
    <svg
      role="img"
      aria-label="${title}: ${rows.map((r) => `${r.label} ${r.text}`).join(', ')}"
      viewBox="0 0 400 ${rows.length * h}"
      width="400"
      height="${rows.length * h}"
    >
      ${rows.map(
        (r, i) =>
          html`<text x="0" y="${i * h + 17}" class="chart-label">${r.label}</text>
            <rect
              x="70"
              y="${i * h + 4}"
              width="${Math.max(1, Math.round((r.value / max) * 250))}"
              height="18"
              class="chart-bar"
            ></rect>
            <text
              x="${Math.max(1, Math.round((r.value / max) * 250)) + 76}"
              y="${i * h + 17}"
              class="chart-label"
              >${r.text}</text
            >`,
      )}
    </svg>
  </figure>`;
}

/** Traffic, errors, latency and bandwidth over a period; health and alerts. */
export function metricsPage(
  view: View,
  ctx: ProjectContext & { metrics: Metrics; health: Health; alerts: Alert[]; now: Date },
) {
  const { base } = view;
  const path = `${base}/projects/${ctx.project.id}/metrics`;
  const m = ctx.metrics.metrics;
  const byStatus = Object.entries(m.errors?.byStatus ?? {}).sort(([a], [b]) => a.localeCompare(b));
  return projectShell(
    view,
    ctx,
    'metrics',
    html`<nav class="tabs" aria-label="Period">
        ${PERIODS.map((p) =>
          p === ctx.metrics.period
            ? html`<a href="${path}?period=${p}" aria-current="page">${p}</a>`
            : html`<a href="${path}?period=${p}">${p}</a>`,
        )}
      </nav>
      <h2>Health</h2>
      <dl class="facts">
        <dt>Status</dt>
        <dd>
          <span
            class="badge ${ctx.health.status === 'healthy' ? 's-live' : ctx.health.status === 'unknown' ? 's-queued' : 's-failed'}"
            >${ctx.health.status}</span
          >
        </dd>
        <dt>Uptime</dt>
        <dd>${ctx.health.uptime === null ? '—' : `${ctx.health.uptime}%`}</dd>
        <dt>Last check</dt>
        <dd>
          ${age(ctx.health.lastCheck, ctx.now)}${ctx.health.responseTime === null ? '' : ` · ${ctx.health.responseTime} ms`}
        </dd>
      </dl>
      <h2>Traffic over ${ctx.metrics.period}</h2>
      <div class="charts">
        ${bars('Requests', [
          { label: 'total', value: m.requests?.total ?? 0, text: String(m.requests?.total ?? 0) },
          { label: 'success', value: m.requests?.success ?? 0, text: String(m.requests?.success ?? 0) },
          {
            label: 'errors',
            value: m.requests?.errors ?? 0,
            text: `${m.requests?.errors ?? 0} (${((m.errors?.rate ?? 0) * 100).toFixed(2)}%)`,
          },
        ])}
        ${bars('Latency (ms)', [
          { label: 'avg', value: m.latency?.avg ?? 0, text: `${m.latency?.avg ?? 0} ms` },
          { label: 'p50', value: m.latency?.p50 ?? 0, text: `${m.latency?.p50 ?? 0} ms` },
          { label: 'p95', value: m.latency?.p95 ?? 0, text: `${m.latency?.p95 ?? 0} ms` },
          { label: 'p99', value: m.latency?.p99 ?? 0, text: `${m.latency?.p99 ?? 0} ms` },
        ])}
        ${
          byStatus.length > 0 &&
          bars(
            'Errors by status',
            byStatus.map(([s, n]) => ({ label: s, value: n, text: String(n) })),
          )
        }
      </div>
      <p>
        Bandwidth:
        ${bytes(m.bandwidth?.total ?? 0)}${m.cpu ? ` · CPU avg ${m.cpu.avg}% (max ${m.cpu.max}%)` : ''}${m.ram ? ` · memory avg ${bytes(m.ram.avg)} (max ${bytes(m.ram.max)})` : ''}
      </p>
      <h2>Alerts</h2>
      ${
        ctx.alerts.length === 0
          ? html`<p class="muted">No alerts.</p>`
          : html`<table>
              <thead>
                <tr>
                  <th scope="col">Alert</th>
                  <th scope="col">Status</th>
                  <th scope="col">Message</th>
                  <th scope="col">Since</th>
                </tr>
              </thead>
              <tbody>
                ${ctx.alerts.map(
                  (a) =>
                    html`<tr>
                      <td>${a.type}</td>
                      <td>
                        <span class="badge ${a.status === 'active' ? 's-failed' : 's-live'}"
                          >${a.status}</span
                        >
                      </td>
                      <td>${a.message}</td>
                      <td>${age(a.createdAt, ctx.now)}</td>
                    </tr>`,
                )}
              </tbody>
            </table>`
      }`,
  );
}
