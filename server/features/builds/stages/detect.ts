import { BuildError } from '../../../platform/sandbox/build-error.ts';
import { type DetectedFramework, detectFramework } from '../detect-framework.ts';

/**
 * The stage that decides how to build: the project's framework setting, else what the files
 * look like; says so in the log, and when the files disagree with the setting or with what the
 * previous build was detected as.
 */
export async function detectStage(
  app: string,
  appPath: string,
  opts: {
    framework: string | null;
    previous: { slug: string; deploymentId: string } | null;
    info: (line: string) => void;
  },
): Promise<DetectedFramework> {
  const fw = await detectFramework(app, { framework: opts.framework });
  if (!fw) {
    throw new BuildError(
      `Could not tell how to build ${appPath === '.' ? 'this repository' : appPath}: no known framework in package.json, no "start" or ` +
        '"build" script, and no index.html. Set the project\'s framework or buildCommand, or add a "build" script.',
    );
  }
  opts.info(describeFramework(fw));
  if (fw.source === 'configured') {
    // The setting wins; say so when the files now look like something else.
    const detected = await detectFramework(app).catch(() => null);
    if (detected && detected.slug !== fw.slug) {
      opts.info(
        `Note: the files look like ${detected.name} (${detected.slug}), but the project's framework setting is ${fw.slug}. ` +
          'Set framework to null to detect it on every build.',
      );
    }
  } else if (opts.previous && opts.previous.slug !== fw.slug) {
    opts.info(
      `Detected framework changed: ${opts.previous.slug} for ${opts.previous.deploymentId}, ${fw.slug} now.`,
    );
  }
  if (fw.kind === 'node' && !fw.startCommand) {
    throw new BuildError(
      `${fw.name} apps run as a Node.js server: add a "start" script to package.json that starts it on $PORT.`,
    );
  }
  return fw;
}

function describeFramework(fw: DetectedFramework): string {
  const how = fw.source === 'detected' ? 'Detected framework' : "Framework (the project's setting)";
  const parts = [`build: ${fw.buildCommand ?? 'none'}`];
  if (fw.kind === 'node') parts.push(`start: ${fw.startCommand ?? 'none'}`);
  else parts.push(`output: ${fw.outputDirectory}`);
  return `${how}: ${fw.name} (${parts.join(', ')})`;
}
