import { readFile } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { z } from 'zod';

/** `outputPath` is a string, or with the application builder `{ base, browser?, server? }`. */
const OutputPath = z.union([
  z.string(),
  z.looseObject({
    /** Directory the build writes into. */
    base: z.string(),
    /** Sub-directory of `base` holding the browser files (default `browser`; `''` for `base` itself). */
    browser: z.string().optional(),
    /** Sub-directory of `base` holding the server files, with SSR (default `server`). */
    server: z.string().optional(),
  }),
]);

const Target = z.looseObject({
  /** `@angular-devkit/build-angular:browser` (older) or `...:application` (Angular 17+). */
  builder: z.string().optional(),
  options: z.looseObject({ outputPath: OutputPath.optional() }).optional(),
});

/** The parts of angular.json that say where `ng build` writes the site. */
const AngularJson = z.looseObject({
  /** Project built when `ng build` names none (Angular before 14). */
  defaultProject: z.string().optional(),
  /** Projects by name. */
  projects: z.record(
    z.string(),
    z.looseObject({
      /** `application` or `library`. */
      projectType: z.string().optional(),
      /** Build targets (`targets` is the newer spelling). */
      architect: z.record(z.string(), Target).optional(),
      targets: z.record(z.string(), Target).optional(),
    }),
  ),
});

// The application builder (Angular 17+) writes the browser files to `<outputPath>/browser`.
const isApplicationBuilder = (builder: string | undefined) =>
  Boolean(builder && /:application$/.test(builder));

/** Where `ng build` writes its output, all relative to the app's folder. */
export interface AngularOutput {
  /** The build's own folder (`dist/<project>`). */
  base: string;
  /** The browser files: the static site. */
  browser: string;
  /** The server files of an SSR build (application builder only), else null. */
  server: string | null;
}

const clean = (path: string) => posix.normalize(path.replace(/\\/g, '/')).replace(/\/$/, '');

/**
 * Where `ng build` writes, read from angular.json: the default (or first application)
 * project's `outputPath`, with `/browser` (and `/server` for SSR) for the application builder.
 * Falls back to `dist` when the file is missing or unreadable.
 */
export async function angularOutput(dir: string): Promise<AngularOutput> {
  const fallback = { base: 'dist', browser: 'dist', server: null };
  let parsed;
  try {
    parsed = AngularJson.safeParse(JSON.parse(await readFile(join(dir, 'angular.json'), 'utf8')));
  } catch {
    return fallback;
  }
  if (!parsed.success) return fallback;
  const projects = Object.entries(parsed.data.projects);
  const chosen =
    projects.find(([name]) => name === parsed.data.defaultProject) ??
    projects.find(([, p]) => p.projectType === 'application') ??
    projects[0];
  if (!chosen) return fallback;
  const [name, project] = chosen;
  const build = project.architect?.build ?? project.targets?.build;
  const outputPath = build?.options?.outputPath;
  const application = isApplicationBuilder(build?.builder);
  const object = typeof outputPath === 'object' ? outputPath : undefined;
  const base = clean(object?.base ?? (typeof outputPath === 'string' ? outputPath : `dist/${name}`));
  const sub = (folder: string | undefined, byDefault: string) =>
    clean(folder === '' ? base : `${base}/${folder ?? byDefault}`);
  if (!application && !object) return { base, browser: base, server: null };
  return {
    base,
    browser: sub(object?.browser, 'browser'),
    server: application ? sub(object?.server, 'server') : null,
  };
}

/** Where `ng build` writes the static site (see angularOutput). */
export async function angularOutputDirectory(dir: string): Promise<string> {
  return (await angularOutput(dir)).browser;
}
