import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { z } from 'zod';

/** What `slipway link` remembers in `<folder>/.slipway/project.json`. */
export const Link = z.object({
  projectId: z.string().startsWith('prj_'),
  projectName: z.string(),
  organizationId: z.string(),
  /** The service the project lives on. */
  apiUrl: z.string().url(),
});
export type Link = z.infer<typeof Link>;

export const LINK_DIR = '.slipway';
const linkFile = (dir: string) => join(dir, LINK_DIR, 'project.json');

/** The link of `dir` or of the nearest folder above it that has one, with that folder. */
export async function findLink(dir: string): Promise<{ link: Link; root: string } | null> {
  for (let at = dir; ; at = dirname(at)) {
    const text = await readFile(linkFile(at), 'utf8').catch(() => null);
    if (text !== null) {
      let parsed: unknown = null;
      try {
        parsed = JSON.parse(text);
      } catch {
        // reported below
      }
      const link = Link.safeParse(parsed);
      if (!link.success) throw new Error(`${linkFile(at)} is damaged: run \`slipway link\` again.`);
      return { link: link.data, root: at };
    }
    if (dirname(at) === at) return null;
  }
}

/** Writes `<dir>/.slipway/project.json` (and a `.gitignore` there, so it is never committed). */
export async function writeLink(dir: string, link: Link): Promise<string> {
  const file = linkFile(dir);
  await mkdir(dirname(file), { recursive: true });
  await writeFile(join(dir, LINK_DIR, '.gitignore'), '*\n');
  await writeFile(`${file}.tmp`, `${JSON.stringify(link, null, 2)}\n`);
  await rename(`${file}.tmp`, file);
  return file;
}
