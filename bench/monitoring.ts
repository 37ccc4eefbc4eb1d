import { alternate, pairedRatio, table } from './lib.ts';
import { spawnBenchServer } from './spawn-server.ts';

interface Info {
  recordingUrl: string;
  plainUrl: string;
  controlUrl: string;
  host: string;
}

/**
 * Edge requests per second for a 10 KiB static file with request recording on and off, measured
 * in the same run against two edges of one process (alternating, so neither gets the warmer
 * machine), and a check that every request made to the recording edge was recorded.
 * Target: recording costs at most 10% of throughput.
 */
export async function benchRecording(seconds = Number(process.env.BENCH_SECONDS ?? 5)): Promise<string> {
  const { info, stop } = await spawnBenchServer<Info>('bench/monitoring-edge-server.ts');
  try {
    const opts = { headers: { host: info.host } };
    const results = await alternate(
      [
        { name: 'recording off', url: `${info.plainUrl}/file-10k.txt`, opts },
        { name: 'recording on', url: `${info.recordingUrl}/file-10k.txt`, opts },
      ],
      { seconds },
    );
    const recorded = Number(await (await fetch(`${info.controlUrl}/recorded`)).text());
    const base = results.get('recording off')!;
    const rows = [...results].map(([name, r]) => ({
      case: name,
      rps: r.rps,
      p50_ms: r.p50,
      p99_ms: r.p99,
      ratio_pct: pairedRatio(r, base),
      non2xx: r.non2xx,
    }));
    const cost = Math.round((100 - pairedRatio(results.get('recording on')!, base)) * 10) / 10;
    return [
      `Edge, 10 KiB static file, request recording off and on (3 alternating ${seconds} s rounds: median requests/s, median of each round's ratio; 10 connections)`,
      table(rows),
      `Recorded in the rollups: ${recorded} requests (warm-up included).`,
      `Cost of recording: ${cost}% of throughput. Target: <= 10% -> ${cost <= 10 ? 'met' : 'NOT met'}`,
    ].join('\n');
  } finally {
    await stop();
  }
}
