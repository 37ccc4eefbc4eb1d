import { readFile } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { z } from 'zod';

/** `outputPath` is a string, or with the application builder `{ base, browser? }`. */
const OutputPath = z.union([
  z.string(),
  z.looseObject({
    /** Directory the build writes into. */
    base: z.string(),
    /** Sub-directory of `base` holding the browser files (default `browser`; `''` for `base` itself). */
    browser: z.string().optional(),
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

/**
 * Where `ng build` writes the site, read from angular.json: the default (or first
 * application) project's `outputPath`, with `/browser` for the application builder.
 * Falls back to `dist` when the file is missing or unreadable.
 */
export async function angularOutputDirectory(dir: string): Promise<string> {
  let parsed;
  try {
    parsed = AngularJson.safeParse(JSON.parse(await readFile(join(dir, 'angular.json'), 'utf8')));
  } catch {
    return 'dist';
  }
  if (!parsed.success) return 'dist';
  const projects = Object.entries(parsed.data.projects);
  const chosen =
    projects.find(([name]) => name === parsed.data.defaultProject) ??
    projects.find(([, p]) => p.projectType === 'application') ??
    projects[0];
  if (!chosen) return 'dist';
  const [name, project] = chosen;
  const build = project.architect?.build ?? project.targets?.build;
  const outputPath = build?.options?.outputPath;
  const application = isApplicationBuilder(build?.builder);

  let out: string;
  if (outputPath === undefined) out = application ? `dist/${name}/browser` : `dist/${name}`;
  else if (typeof outputPath === 'string') out = application ? `${outputPath}/browser` : outputPath;
  else
    out =
      outputPath.browser === '' ? outputPath.base : `${outputPath.base}/${outputPath.browser ?? 'browser'}`;
  return posix.normalize(out.replace(/\\/g, '/')).replace(/\/$/, '');
}
