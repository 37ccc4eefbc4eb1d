import type { RollupSpan } from '../../platform/store/schema.ts';
import { html, type Html } from '../html.ts';

/** One line of a chart: its name, its class (colour) and a value per point (null: no data there). */
export interface Line {
  name: string;
  cls: 'l1' | 'l2';
  values: (number | null)[];
}

const W = 600;
const H = 170;
const LEFT = 56;
const RIGHT = 8;
const TOP = 8;
const BOTTOM = 22;

/** The smallest of 1, 2, 2.5, 5 times a power of ten that is at least `n` (an axis' top). */
export function niceCeiling(n: number): number {
  if (n <= 0) return 1;
  const p = 10 ** Math.floor(Math.log10(n));
  return [1, 2, 2.5, 5, 10].map((m) => m * p).find((c) => c >= n)!;
}

/** A bucket's start as its axis label: the time of day for minutes and hours, the date for days and weeks. */
export function timeLabel(iso: string, span: RollupSpan, long: boolean): string {
  if (span === 'day' || long) return `${iso.slice(5, 10)}${span === 'day' ? '' : ` ${iso.slice(11, 16)}`}`;
  return iso.slice(11, 16);
}

/** The line's path: a gap where a value is missing, a dot for a lone point. */
function path(values: (number | null)[], x: (i: number) => number, y: (v: number) => number): string {
  let d = '';
  let open = false;
  values.forEach((v, i) => {
    if (v === null) {
      open = false;
      return;
    }
    const lone = !open && (i + 1 >= values.length || values[i + 1] === null);
    d += `${open ? 'L' : 'M'}${x(i).toFixed(1)} ${y(v).toFixed(1)}`;
    if (lone) d += `h0.1`;
    open = true;
  });
  return d;
}

/**
 * A time series as an inline SVG line chart, drawn on the server (no script, no library): one or
 * two lines over the period's buckets, the axis' top and zero, the first and last times. The
 * figure says in words what it shows (`summary`); the numbers are in the page's table.
 */
export function lineChart(opts: {
  title: string;
  summary: string;
  at: string[];
  span: RollupSpan;
  lines: Line[];
  format: (n: number) => string;
}): Html {
  const { at, lines } = opts;
  const n = at.length;
  const top = niceCeiling(Math.max(0, ...lines.flatMap((l) => l.values.filter((v) => v !== null))));
  const x = (i: number) => LEFT + (n <= 1 ? 0 : (i * (W - LEFT - RIGHT)) / (n - 1));
  const y = (v: number) => TOP + (1 - v / top) * (H - TOP - BOTTOM);
  // Over more than a day's hours a time alone is ambiguous: the labels carry the date too.
  const long = n > 0 && Date.parse(at[n - 1]!) - Date.parse(at[0]!) >= 12 * 3_600_000;
  return html`<figure class="chart">
    <figcaption>
      ${opts.title}
      ${
        lines.length > 1 &&
        lines.map(
          (l) =>
            html`<span class="key ${l.cls}"><span class="swatch" aria-hidden="true"></span>${l.name}</span>`,
        )
      }
    </figcaption>
    <svg role="img" aria-label="${opts.title}: ${opts.summary}" viewBox="0 0 ${W} ${H}">
      <line x1="${LEFT}" x2="${W - RIGHT}" y1="${y(top)}" y2="${y(top)}" class="grid"></line>
      <line x1="${LEFT}" x2="${W - RIGHT}" y1="${y(0)}" y2="${y(0)}" class="axis"></line>
      <text x="${LEFT - 6}" y="${y(top) + 4}" text-anchor="end" class="chart-label">${opts.format(top)}</text>
      <text x="${LEFT - 6}" y="${y(0) + 4}" text-anchor="end" class="chart-label">0</text>
      ${
        n > 0 &&
        html`<text x="${LEFT}" y="${H - 4}" class="chart-label">${timeLabel(at[0]!, opts.span, long)}</text>
          <text x="${W - RIGHT}" y="${H - 4}" text-anchor="end" class="chart-label">
            ${timeLabel(at[n - 1]!, opts.span, long)} UTC
          </text>`
      }
      ${lines.map((l) => html`<path d="${path(l.values, x, y)}" class="line ${l.cls}"></path>`)}
    </svg>
  </figure>`;
}
