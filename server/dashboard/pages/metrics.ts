import type { Alert, Health, Metrics, MetricsPeriod } from '../../../api/schemas/monitoring.ts';
import { html } from '../html.ts';
import type { MetricSeries } from '../../../api/schemas/monitoring.ts';
import { age, type View } from '../layout.ts';
import { lineChart } from './line-chart.ts';
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

const SPAN_WORD = { minute: 'minute', hour: 'hour', day: 'day' } as const;
const count = (n: number) => n.toLocaleString('en-US');

/** The largest value of a series and when, in words ("at most 12 at 14:00"). */
function peak(series: MetricSeries, values: (number | null)[], format: (n: number) => string): string {
  let best = -1;
  values.forEach((v, i) => {
    if (v !== null && (best < 0 || v > values[best]!)) best = i;
  });
  if (best < 0 || values[best] === 0) return 'none in the period';
  return `at most ${format(values[best]!)} in the ${SPAN_WORD[series.span]} from ${series.points[best]!.at.slice(0, 16).replace('T', ' ')} UTC`;
}

/** The period's traffic as line charts, one point per minute, hour or day. */
function seriesCharts(series: MetricSeries) {
  const at = series.points.map((p) => p.at);
  const per = SPAN_WORD[series.span];
  const requests = series.points.map((p) => p.requests);
  const errors = series.points.map((p) => p.errors);
  const avg = series.points.map((p) => p.latencyAvg);
  const p95 = series.points.map((p) => p.latencyP95);
  const sent = series.points.map((p) => p.bytes);
  const ms = (n: number) => `${Math.round(n * 100) / 100} ms`;
  return html`<div class="charts">
      ${lineChart({
        title: `Requests per ${per}`,
        summary: `${count(requests.reduce((a, b) => a + b, 0))} requests, ${peak(series, requests, count)}; ${count(errors.reduce((a, b) => a + b, 0))} errors, ${peak(series, errors, count)}`,
        at,
        span: series.span,
        format: count,
        lines: [
          { name: 'requests', cls: 'l1', values: requests },
          { name: 'errors', cls: 'l2', values: errors },
        ],
      })}
      ${lineChart({
        title: 'Latency (ms)',
        summary: `average ${peak(series, avg, ms)}; p95 ${peak(series, p95, ms)}`,
        at,
        span: series.span,
        format: (n) => String(n),
        lines: [
          { name: 'average', cls: 'l1', values: avg },
          { name: 'p95', cls: 'l2', values: p95 },
        ],
      })}
      ${lineChart({
        title: `Bandwidth per ${per}`,
        summary: `${bytes(sent.reduce((a, b) => a + b, 0))} sent, ${peak(series, sent, bytes)}`,
        at,
        span: series.span,
        format: bytes,
        lines: [{ name: 'bytes sent', cls: 'l1', values: sent }],
      })}
    </div>
    <details class="series-data">
      <summary>The numbers, per ${per}</summary>
      <table>
        <thead>
          <tr>
            <th scope="col">${per[0]!.toUpperCase() + per.slice(1)} from (UTC)</th>
            <th scope="col">Requests</th>
            <th scope="col">Errors</th>
            <th scope="col">Average</th>
            <th scope="col">p95</th>
            <th scope="col">Sent</th>
          </tr>
        </thead>
        <tbody>
          ${
            series.points.every((p) => p.requests === 0) &&
            html`<tr>
              <td colspan="6" class="muted">No requests in the period.</td>
            </tr>`
          }
          ${series.points
            .filter((p) => p.requests > 0)
            .map(
              (p) =>
                html`<tr>
                  <td data-label="From">${p.at.slice(0, 16).replace('T', ' ')}</td>
                  <td data-label="Requests">${count(p.requests)}</td>
                  <td data-label="Errors">${count(p.errors)}</td>
                  <td data-label="Average">${p.latencyAvg === null ? '—' : ms(p.latencyAvg)}</td>
                  <td data-label="p95">${p.latencyP95 === null ? '—' : ms(p.latencyP95)}</td>
                  <td data-label="Sent">${bytes(p.bytes)}</td>
                </tr>`,
            )}
        </tbody>
      </table>
    </details>`;
}

/** Traffic, errors, latency and bandwidth over a period, as totals and time series; health and alerts. */
export function metricsPage(
  view: View,
  ctx: ProjectContext & {
    metrics: Metrics;
    series: MetricSeries;
    health: Health;
    alerts: Alert[];
    now: Date;
  },
) {
  const path = `${view.base}/projects/${ctx.project.id}/metrics`;
  const m = ctx.metrics.metrics;
  const byStatus = Object.entries(m.errors?.byStatus ?? {}).sort(([a], [b]) => a.localeCompare(b));
  // Not reformatted (prettier-ignore), here and in each section: the HTML keeps the indentation
  // it had when the page was one function, so the page sends the same bytes.
  // prettier-ignore
  return projectShell(
    view,
    ctx,
    'metrics',
    html`${periodTabs(path, ctx.metrics.period)}
      <h2>Health</h2>
      ${healthFacts(ctx.health, ctx.now)}
      <h2>Traffic over ${ctx.metrics.period}</h2>
      ${totals(m)}
      ${seriesCharts(ctx.series)}
      ${
        byStatus.length > 0 &&
        html`<div class="charts">
          ${bars(
            'Errors by status',
            byStatus.map(([s, n]) => ({ label: s, value: n, text: String(n) })),
          )}
        </div>`
      }
      <h2>Alerts</h2>
      ${alertList(ctx.alerts, ctx.now)}`,
  );
}

/** A link per period, the one shown marked. */
function periodTabs(path: string, period: MetricsPeriod) {
  // prettier-ignore
  return html`<nav class="tabs" aria-label="Period">
        ${PERIODS.map((p) =>
          p === period
            ? html`<a href="${path}?period=${p}" aria-current="page">${p}</a>`
            : html`<a href="${path}?period=${p}">${p}</a>`,
        )}
      </nav>`;
}

/** The project's health: status, uptime, the last check and how long it took. */
function healthFacts(health: Health, now: Date) {
  // prettier-ignore
  return html`<dl class="facts">
        <dt>Status</dt>
        <dd>
          <span
            class="badge ${health.status === 'healthy' ? 's-live' : health.status === 'unknown' ? 's-queued' : 's-failed'}"
            >${health.status}</span
          >
        </dd>
        <dt>Uptime</dt>
        <dd>${health.uptime === null ? '—' : `${health.uptime}%`}</dd>
        <dt>Last check</dt>
        <dd>
          ${age(health.lastCheck, now)}${health.responseTime === null ? '' : ` · ${health.responseTime} ms`}
        </dd>
      </dl>`;
}

/** The period's totals: requests, errors, latency, bandwidth, and CPU and memory when measured. */
function totals(m: Metrics['metrics']) {
  // prettier-ignore
  return html`<dl class="stats">
        <div>
          <dt>Requests</dt>
          <dd>${count(m.requests?.total ?? 0)}</dd>
        </div>
        <div>
          <dt>Errors</dt>
          <dd>${count(m.requests?.errors ?? 0)} (${(m.errors?.rate ?? 0).toFixed(2)}%)</dd>
        </div>
        <div>
          <dt>Latency</dt>
          <dd>
            avg ${m.latency?.avg ?? 0} ms · p50 ${m.latency?.p50 ?? 0} · p95 ${m.latency?.p95 ?? 0} · p99
            ${m.latency?.p99 ?? 0}
          </dd>
        </div>
        <div>
          <dt>Bandwidth</dt>
          <dd>${bytes(m.bandwidth?.total ?? 0)}</dd>
        </div>
        ${
          m.cpu &&
          html`<div>
            <dt>CPU</dt>
            <dd>avg ${m.cpu.avg}% (max ${m.cpu.max}%)</dd>
          </div>`
        }
        ${
          m.ram &&
          html`<div>
            <dt>Memory</dt>
            <dd>avg ${bytes(m.ram.avg)} (max ${bytes(m.ram.max)})</dd>
          </div>`
        }
      </dl>`;
}

/** The project's alerts, active or resolved, and since when. */
function alertList(alerts: Alert[], now: Date) {
  // prettier-ignore
  return alerts.length === 0
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
                ${alerts.map(
                  (a) =>
                    html`<tr>
                      <td data-label="Alert">${a.type}</td>
                      <td data-label="Status">
                        <span class="badge ${a.status === 'active' ? 's-failed' : 's-live'}"
                          >${a.status}</span
                        >
                      </td>
                      <td data-label="Message">${a.message}</td>
                      <td data-label="Since">${age(a.createdAt, now)}</td>
                    </tr>`,
                )}
              </tbody>
            </table>`;
}
