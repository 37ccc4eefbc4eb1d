import type { BuildSettings } from '../../../platform/store/build-spec.ts';

/** The first build log line about settings: what the project sets, the rest detected. */
export function describeSettings(framework: string | null, s: BuildSettings): string {
  const set = [
    framework ? `framework ${framework}` : null,
    s.rootDirectory ? `root directory ${s.rootDirectory}` : null,
    s.installCommand !== null
      ? `install command ${s.installCommand ? `"${s.installCommand}"` : '(none)'}`
      : null,
    s.buildCommand !== null ? `build command ${s.buildCommand ? `"${s.buildCommand}"` : '(none)'}` : null,
    s.outputDirectory ? `output directory ${s.outputDirectory}` : null,
  ].filter((x): x is string => x !== null);
  return set.length
    ? `Project settings: ${set.join(', ')}; the rest is detected`
    : 'Project settings: none, everything is detected';
}
