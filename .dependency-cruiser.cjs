/**
 * The direction of imports, checked by `npm run lint:imports` (part of `npm run check`).
 * docs/architecture.md draws the same picture in words.
 *
 * Packages: api/ depends on nothing of ours; action/ and bot/ on api/ only; cli/ on api/ (and the
 * service's own commands through server/main.ts); server/ on api/, and on bot/ only where it runs
 * the App (its roles and entry point).
 *
 * Inside server/, floors from the bottom up: a file may import its own floor and the floors below,
 * never one above. There are no import circles anywhere (type-only imports count too).
 */
const FLOORS = [
  ['server/core/'],
  [
    'server/platform/store/',
    'server/platform/storage/',
    'server/platform/ops-metrics/',
    'server/platform/config\\.ts$',
    'server/platform/config/',
  ],
  ['server/platform/queue/', 'server/platform/sandbox/', 'server/platform/routing/'],
  ['server/platform/deps/', 'server/platform/http/', 'server/platform/jobs/'],
  ['server/features/'],
  ['server/dashboard/', 'server/routes/'],
  [
    'server/schedule/',
    'server/roles/',
    'server/app\\.ts$',
    'server/runtime\\.ts$',
    'server/token-command\\.ts$',
  ],
  ['server/serve\\.ts$', 'server/main\\.ts$'],
];

/**
 * The features of server/features/, from the bottom up: a feature may import the features below it,
 * never one above, and only through their public entry (`index.ts`). Everything outside a feature
 * (the dashboard, the route table, the roles) also reaches it through its entry only.
 */
const FEATURES = [
  'backup',
  'identity',
  'webhooks',
  'github',
  'uploads',
  'deployments',
  'builds',
  'serving',
  'monitoring',
  'billing',
];
const anyOf = (paths) => `^(${paths.join('|')})`;

const floorRules = FLOORS.slice(0, -1).map((floor, i) => ({
  name: `server-floor-${i}`,
  comment: `${floor.join(', ')} may not import a higher floor of server/ (.dependency-cruiser.cjs)`,
  severity: 'error',
  from: { path: anyOf(floor) },
  to: { path: anyOf(FLOORS.slice(i + 1).flat()) },
}));

const featureRules = FEATURES.slice(0, -1).map((feature, i) => ({
  name: `feature-${feature}`,
  comment: `features/${feature} may not import a feature above it: ${FEATURES.slice(i + 1).join(', ')} (.dependency-cruiser.cjs)`,
  severity: 'error',
  from: { path: `^server/features/${feature}/` },
  to: { path: `^server/features/(${FEATURES.slice(i + 1).join('|')})/` },
}));

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'An import circle: break it by moving what both sides need into a file of its own.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'api-depends-on-nothing',
      comment: 'api/ is the shared contract: it imports nothing else of ours.',
      severity: 'error',
      from: { path: '^api/' },
      to: { path: '^(server|bot|action|cli)/' },
    },
    {
      name: 'action-and-bot-only-on-api',
      comment: 'The Action and the App talk to the service through api/ only.',
      severity: 'error',
      from: { path: '^(action|bot)/' },
      to: { path: '^(server|cli|action|bot)/', pathNot: '^$1/' },
    },
    {
      name: 'cli-only-on-api',
      comment: "The CLI talks to the service through api/; the service's own commands load server/main.ts.",
      severity: 'error',
      from: { path: '^cli/' },
      to: { path: '^(server|bot|action)/', pathNot: '^server/main\\.ts$' },
    },
    {
      name: 'server-runs-the-bot-only-from-its-roles',
      comment: 'server/ starts the App (bot/) in its roles and entry point only.',
      severity: 'error',
      from: { path: '^server/', pathNot: '^server/(roles/|main\\.ts$)' },
      to: { path: '^(bot|action|cli)/' },
    },
    {
      name: 'server-files-on-a-floor',
      comment: 'Every file of server/ stands on one of the floors of .dependency-cruiser.cjs.',
      severity: 'error',
      from: { path: '^server/', pathNot: anyOf(FLOORS.flat()) },
      to: {},
    },
    {
      name: 'features-through-their-entry',
      comment:
        'Another feature is reached through its public entries (server/features/<name>/index.ts, and roles.ts for what the process roles start) only.',
      severity: 'error',
      from: { path: '^server/features/([^/]+)/' },
      to: {
        path: '^server/features/',
        pathNot: ['^server/features/$1/', '^server/features/[^/]+/(index|roles)\\.ts$'],
      },
    },
    {
      name: 'wiring-through-feature-entries',
      comment:
        'Code outside the features reaches a feature through its public entries (server/features/<name>/index.ts, and roles.ts) only.',
      severity: 'error',
      from: { path: '^server/', pathNot: '^server/features/' },
      to: { path: '^server/features/[^/]+/', pathNot: '^server/features/[^/]+/(index|roles)\\.ts$' },
    },
    {
      name: 'api-without-the-roles-entries',
      comment:
        "The API (server/app.ts) does not load a feature's roles.ts, directly or through other files: the edge, the builder and the sandbox stay out of the API process and its tests.",
      severity: 'error',
      from: { path: '^server/app\\.ts$' },
      to: { path: '^server/features/[^/]+/roles\\.ts$', reachable: true },
    },
    {
      name: 'features-on-the-list',
      comment: 'Every folder of server/features/ is one of FEATURES in .dependency-cruiser.cjs.',
      severity: 'error',
      from: { path: '^server/features/', pathNot: `^server/features/(${FEATURES.join('|')})/` },
      to: {},
    },
    ...floorRules,
    ...featureRules,
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|dist)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default'],
    },
  },
};
