import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';

/**
 * The API reference for people: Redoc (a maintained OpenAPI renderer) fed by /v1/openapi.json.
 * Its standalone bundle is committed in dist/docs (`npm run vendor:docs`; a test checks it is the
 * pinned devDependency's), so the page works offline and without dev dependencies. Links are
 * relative: the page also works under a path prefix behind a proxy.
 */
export const DOCS_SCRIPT = 'redoc.standalone.js';

export function docsPage(version: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Slipway API ${version}</title>
<style>body{margin:0}</style>
</head>
<body>
<noscript><p>This reference needs JavaScript. The API's description is <a href="v1/openapi.json">/v1/openapi.json</a> (OpenAPI 3.1).</p></noscript>
<redoc spec-url="v1/openapi.json" expand-responses="200,201" required-props-first="true"></redoc>
<script src="docs/${DOCS_SCRIPT}"></script>
</body>
</html>
`;
}

export interface DocsAsset {
  body: Buffer;
  gzip: Buffer;
  etag: string;
}

let asset: DocsAsset | undefined;

/** The renderer's script, read and compressed once (1.1 MB, 0.3 MB gzipped). */
export function docsScript(dir = join(import.meta.dirname, '..', '..', '..', 'dist', 'docs')): DocsAsset {
  if (asset) return asset;
  const body = readFileSync(join(dir, DOCS_SCRIPT));
  asset = {
    body,
    gzip: gzipSync(body, { level: 9 }),
    etag: `"${createHash('sha256').update(body).digest('hex').slice(0, 16)}"`,
  };
  return asset;
}
