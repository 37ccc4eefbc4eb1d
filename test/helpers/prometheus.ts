/**
 * A strict reader of the Prometheus text exposition format (version 0.0.4), for tests: it throws
 * on any line the format does not allow, on samples of families without `# HELP` and `# TYPE`,
 * and on histograms whose buckets do not add up (cumulative, `+Inf` equal to `_count`).
 * (parse-prometheus-text-format from npm drops the labels of labelled histograms.)
 */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  name: string;
  type: 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';
  help: string;
  samples: Sample[];
}

export type Families = Family[];

const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*';
const LABEL = `([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\\\\n]|\\\\[\\\\"n])*)"`;
const SAMPLE = new RegExp(`^(${NAME})(?:\\{((?:${LABEL},?)*)\\})? (\\S+)(?: -?\\d+)?$`);
const VALUE = /^(?:[-+]?(?:\d+\.?\d*(?:e[-+]?\d+)?|\.\d+)|[-+]?Inf|NaN)$/i;

function labelsOf(text: string | undefined): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const m of (text ?? '').matchAll(new RegExp(LABEL, 'g'))) {
    labels[m[1]!] = m[2]!.replace(/\\n/g, '\n').replace(/\\(["\\])/g, '$1');
  }
  return labels;
}

/** The family a sample belongs to: `x_bucket`, `x_sum`, `x_count` of a histogram or summary are x's. */
function familyOf(families: Map<string, Family>, name: string): Family | undefined {
  const own = families.get(name);
  if (own) return own;
  const m = /^(.*)_(bucket|sum|count)$/.exec(name);
  const base = m ? families.get(m[1]!) : undefined;
  if (!base) return undefined;
  return base.type === 'histogram' || (base.type === 'summary' && m![2] !== 'bucket') ? base : undefined;
}

function checkHistogram(f: Family): void {
  const series = new Map<string, Sample[]>();
  for (const s of f.samples.filter((s) => s.name === `${f.name}_bucket`)) {
    const { le, ...rest } = s.labels;
    if (le === undefined) throw new Error(`${f.name}_bucket without le`);
    const key = JSON.stringify(rest);
    series.set(key, [...(series.get(key) ?? []), s]);
  }
  for (const [key, buckets] of series) {
    const values = buckets.map((b) => b.value);
    if (values.some((v, i) => i > 0 && v < values[i - 1]!))
      throw new Error(`${f.name}${key}: buckets not cumulative`);
    const inf = buckets.find((b) => b.labels.le === '+Inf');
    const count = f.samples.find((s) => s.name === `${f.name}_count` && JSON.stringify(s.labels) === key);
    if (!inf || !count || inf.value !== count.value)
      throw new Error(`${f.name}${key}: +Inf bucket is not _count`);
  }
}

/** Parses a scrape, throwing on anything the text format does not allow. */
export function parseScrape(text: string): Families {
  const families = new Map<string, Family>();
  const declare = (name: string) => {
    let f = families.get(name);
    if (!f) families.set(name, (f = { name, type: 'untyped', help: '', samples: [] }));
    return f;
  };
  text.split('\n').forEach((line, i) => {
    if (line === '') return;
    const meta = new RegExp(`^# (HELP|TYPE) (${NAME}) ?(.*)$`).exec(line);
    if (meta) {
      const f = declare(meta[2]!);
      if (meta[1] === 'HELP') f.help = meta[3]!;
      else if (/^(counter|gauge|histogram|summary|untyped)$/.test(meta[3]!))
        f.type = meta[3] as Family['type'];
      else throw new Error(`line ${i + 1}: unknown type "${meta[3]}"`);
      return;
    }
    if (line.startsWith('#')) return;
    const m = SAMPLE.exec(line);
    if (!m || !VALUE.test(m[m.length - 1]!)) throw new Error(`line ${i + 1} is not a sample: ${line}`);
    const name = m[1]!;
    const family = familyOf(families, name);
    if (!family || family.type === 'untyped' || family.help === '') {
      throw new Error(`line ${i + 1}: ${name} has no # HELP and # TYPE before it`);
    }
    family.samples.push({
      name,
      labels: labelsOf(m[2]),
      value: Number(m[m.length - 1]!.replace(/Inf/i, 'Infinity')),
    });
  });
  for (const f of families.values()) if (f.type === 'histogram') checkHistogram(f);
  return [...families.values()];
}

/** GETs a /metrics URL with the operator's token and parses it; throws unless it answers 200. */
export async function scrape(url: string, token?: string): Promise<Families> {
  const res = await fetch(url, token ? { headers: { authorization: `Bearer ${token}` } } : {});
  const text = await res.text();
  if (res.status !== 200) throw new Error(`GET ${url}: ${res.status} ${text}`);
  if (!res.headers.get('content-type')?.startsWith('text/plain; version=0.0.4')) {
    throw new Error(`GET ${url}: content type ${res.headers.get('content-type')}`);
  }
  return parseScrape(text);
}

const matches = (labels: Record<string, string>, want: Record<string, string>) =>
  Object.entries(want).every(([k, v]) => labels[k] === v);

/** The value of the sample `name` with these labels (among others); undefined when there is none. */
export function sample(families: Families, name: string, labels: Record<string, string> = {}) {
  for (const f of families) {
    const s = f.samples.find((s) => s.name === name && matches(s.labels, labels));
    if (s) return s.value;
  }
  return undefined;
}

/** A histogram's count of observations with these labels (0 when it has none yet). */
export function histogramCount(families: Families, name: string, labels: Record<string, string> = {}) {
  return sample(families, `${name}_count`, labels) ?? 0;
}
