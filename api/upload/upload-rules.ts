import { type CollectOptions, LEFT_OUT_BY_DEFAULT, SECRETS_LEFT_OUT } from './collect-files.ts';
import { countFiles } from './format.ts';

/**
 * What a deploy of a folder uploads, the same from `slipway deploy` and the Action
 * (docs/cli.md#what-is-uploaded): what .gitignore and .slipwayignore exclude stays behind, and
 * so do .env files and node_modules unless a .slipwayignore negation names them. Build output
 * (`prebuilt`) is often git-ignored, so only .slipwayignore applies to it, and its node_modules
 * go up: a server's build output (Nitro, Next.js standalone) runs with them.
 */
export function uploadRules(
  prebuilt: boolean,
): Pick<CollectOptions, 'ignoreFiles' | 'leaveOut' | 'takeBackFile'> {
  return {
    ignoreFiles: prebuilt ? ['.slipwayignore'] : ['.gitignore', '.slipwayignore'],
    leaveOut: prebuilt ? SECRETS_LEFT_OUT : LEFT_OUT_BY_DEFAULT,
    takeBackFile: '.slipwayignore',
  };
}

/**
 * Collects what `uploadRules` left out (and what cannot be uploaded, such as links) as it is
 * found, and says it in one line, so nothing disappears silently.
 */
export function leftOutList() {
  const names: string[] = [];
  return {
    onLeftOut: (path: string, isDir: boolean, n: number) =>
      void names.push(isDir ? `${path} (${countFiles(n)})` : path),
    onSkip: (path: string, reason: string) => void names.push(`${path} (${reason})`),
    /** `Left out: .env.local, node_modules/ (2 files) — see docs/cli.md#what-is-uploaded`, or null. */
    line(): string | null {
      if (names.length === 0) return null;
      const more = names.length > 8 ? ` and ${names.length - 8} more` : '';
      return `Left out: ${names.slice(0, 8).join(', ')}${more} — see docs/cli.md#what-is-uploaded`;
    },
  };
}
