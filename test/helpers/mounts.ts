import { mountPoints } from '../../server/platform/sandbox/workspace-disk.ts';

/** Mount points under `dir` in this process's mount namespace (/proc/self/mountinfo). */
export async function mountsUnder(dir: string): Promise<string[]> {
  return (await mountPoints()).filter((p) => p.startsWith(`${dir}/`)).sort();
}
