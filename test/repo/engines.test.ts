import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import semver from 'semver';
import { describe, expect, it } from 'vitest';

// `npm install` warns EBADENGINE for any installed package that does not support
// the running Node.js. The README and package.json name the oldest Node.js we
// support; every package the lockfile installs must run on it.
const root = join(import.meta.dirname, '..', '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  engines: { node: string };
};
const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, { engines?: { node?: string } | string[]; optional?: boolean }>;
};

describe('supported Node.js', () => {
  const oldest = semver.minVersion(pkg.engines.node)!.version;

  it('the README names the same oldest Node.js as package.json', () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    const [major, minor] = oldest.split('.');
    expect(readme).toContain(`Node.js ${major}.${minor} or newer`);
  });

  it(`every installed package supports Node.js ${oldest}`, () => {
    const refusing = Object.entries(lock.packages)
      .filter(([path]) => path !== '')
      .flatMap(([path, entry]) => {
        const range = Array.isArray(entry.engines) ? undefined : entry.engines?.node;
        return range && !semver.satisfies(oldest, range) ? [`${path} wants node ${range}`] : [];
      });
    expect(refusing).toEqual([]);
  });
});
