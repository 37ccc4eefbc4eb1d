import { readdirSync } from 'node:fs';
import { join } from 'node:path';

/**
 * This process's sandbox groups under `parents` (Cgroups.parents), also those one level down, in
 * the plans' CPU pools (server/platform/sandbox/cpu-pools.ts).
 */
export function ownCgroups(parents: readonly string[]): string[] {
  const own = (name: string) => name.startsWith(`${process.pid}-`);
  return parents.flatMap((p) =>
    readdirSync(p, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .flatMap((e) =>
        own(e.name)
          ? [join(p, e.name)]
          : readdirSync(join(p, e.name))
              .filter(own)
              .map((n) => join(p, e.name, n)),
      ),
  );
}
