import type { BuildSettings, CreateProjectBody } from '../../../../api/schemas/projects.ts';

/**
 * The build settings a body gives, as columns: absent ones are left out (on update, unchanged),
 * and a root directory of `.` is the root, stored as null.
 */
export function buildSettingsOf(body: Partial<Pick<CreateProjectBody, keyof typeof BuildSettings>>) {
  const out: Partial<
    Record<'install_command' | 'build_command' | 'output_directory' | 'root_directory', string | null>
  > = {};
  if (body.installCommand !== undefined) out.install_command = body.installCommand;
  if (body.buildCommand !== undefined) out.build_command = body.buildCommand;
  if (body.outputDirectory !== undefined) out.output_directory = body.outputDirectory;
  if (body.rootDirectory !== undefined)
    out.root_directory = body.rootDirectory === '.' ? null : body.rootDirectory;
  return out;
}
