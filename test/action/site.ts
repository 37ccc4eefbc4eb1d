import { createGitRepo, type GitRepo } from '../helpers/git-repo.ts';

/** What one commit of the test site builds: its version, and whether it breaks. */
export interface SiteState {
  version: string;
  /** false: no /health.json, so the health check answers 404. */
  healthy?: boolean;
  /** The build exits with an error. */
  fail?: boolean;
  /** The build never ends. */
  hang?: boolean;
}

const BUILD = `import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
const site = JSON.parse(readFileSync('site.json', 'utf8'));
console.log('building version ' + site.version);
if (site.fail) {
  console.error('Error: this build is broken on purpose');
  process.exit(2);
}
if (site.hang) {
  console.log('waiting for a step that never ends');
  setInterval(() => {}, 1000);
} else {
  mkdirSync('dist', { recursive: true });
  writeFileSync('dist/index.html', '<h1>' + site.version + '</h1>');
  if (site.healthy !== false) writeFileSync('dist/health.json', '{"ok":true}');
  console.log('built version ' + site.version);
}
`;

/** The files of a commit in `state`. */
export const siteFiles = (state: SiteState) => ({ 'site.json': JSON.stringify(state) });

/** A git repository of a static site on `main`, first commit version v1, healthy. */
export function createSiteRepo(): GitRepo {
  return createGitRepo({
    files: {
      'package.json': JSON.stringify({ name: 'site', private: true, scripts: { build: 'node build.mjs' } }),
      'build.mjs': BUILD,
      ...siteFiles({ version: 'v1' }),
    },
  });
}
