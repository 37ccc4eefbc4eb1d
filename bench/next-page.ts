/**
 * The page the Next.js benches add to the create-next-app starter: rendered per request (with
 * cacheComponents, the starter's setting, request-time work sits inside <Suspense>), as in
 * test/frameworks/next.test.ts.
 */
export const NEXT_SSR_PAGE: Record<string, string> = {
  'app/now/page.tsx':
    "import { Suspense } from 'react';\nimport { connection } from 'next/server';\n\n" +
    'async function Value() {\n  await connection();\n' +
    '  return <p id="now">{`rendered-${Date.now()}-${Math.random()}`}</p>;\n}\n\n' +
    'export default function Now() {\n  return <Suspense fallback={<p>…</p>}><Value /></Suspense>;\n}\n',
};
