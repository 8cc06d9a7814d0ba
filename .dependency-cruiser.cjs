/**
 * The import rules of docs/architecture.md, checked on every CI run (`npm run check:deps`).
 * Rooms: core (activities/core) and the vendor adapters (activities/adapters) import no component; a component
 * (activities/<name>/) is used by others only through its surface, `index.ts` (and `constants.ts`);
 * activities never import the edge or the processes; a component or adapter reads the configuration through its
 * settings.ts slice; workflows import only types; no cycles.
 */
const COMPONENT_PRIVATE = '^activities/(?!core/|adapters/)[^/]+/(?!index\\.ts$|constants\\.ts$)';

module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      severity: 'error',
      comment:
        'A cycle ties modules together: start-up order breaks and nothing can be read or replaced alone. Type-only imports count too: a type cycle is a design cycle.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'component-private',
      severity: 'error',
      comment:
        "Another component's private file (store, models, helpers): use its surface, index.ts, or have the composition root (workers/root.ts) hand the capability in.",
      from: { path: '^activities/([^/]+)/' },
      to: { path: COMPONENT_PRIVATE, pathNot: '^activities/$1/' },
    },
    {
      name: 'outside-private',
      severity: 'error',
      comment:
        'The edge, the workflows and the processes use a component through its surface (index.ts, constants.ts) only.',
      from: { path: '^(edge|workflows|workers)/' },
      to: { path: COMPONENT_PRIVATE },
    },
    {
      name: 'core-imports-no-component',
      severity: 'error',
      comment:
        'activities/core (errors, config, ids, logger, locks, db, encryption, runtime) is below every component and adapter.',
      from: { path: '^activities/core/' },
      to: { path: '^(activities/(?!core/)|edge/|workers/|workflows/)' },
    },
    {
      name: 'adapters-import-no-component',
      severity: 'error',
      comment:
        'Vendor adapters (storage, OCR, images, PDF, speech, mail, payments, gift providers, ...) know no component.',
      from: { path: '^activities/adapters/' },
      to: { path: '^(activities/(?!core/|adapters/)|edge/|workers/|workflows/)' },
    },
    {
      name: 'config-through-slices',
      severity: 'error',
      comment:
        'A component or adapter reads its own slice of the configuration, from its settings.ts (slice(keys) of activities/core/config.ts, read at call time), never the whole configuration: only activities/core/ and the settings.ts files import activities/core/config.ts.',
      from: { path: '^activities/(?!core/)', pathNot: '/settings\\.ts$' },
      to: { path: '^activities/core/config\\.ts$' },
    },
    {
      name: 'activities-not-up',
      severity: 'error',
      comment: 'Components run in the worker and the edge alike: they never import the edge or the processes.',
      from: { path: '^activities/' },
      to: { path: '^(edge|workers)/' },
    },
    {
      name: 'workflows-types-only',
      severity: 'error',
      comment: 'Workflow code is deterministic and bundled alone: it imports only types from outside workflows/.',
      from: { path: '^workflows/' },
      to: { path: '^(activities|edge|workers)/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'edge-not-to-processes',
      severity: 'error',
      comment:
        'The processes (workers/) start the edge, not the other way round; the edge reaches Temporal through the runs room (workers/runs/) alone.',
      from: { path: '^edge/' },
      to: { path: '^workers/(?!runs/)' },
    },
    {
      name: 'routes-no-vendor',
      severity: 'error',
      comment:
        'A route validates, calls its component and answers: the vendor SDKs live in activities/adapters/ and Temporal in the runs room (workers/runs/).',
      from: { path: '^edge/routes/' },
      to: {
        path: '^node_modules/(stripe|openai|minio|mongoose|nodemailer|sharp|heic-convert|pdfjs-dist|qrcode|@temporalio)/',
      },
    },
    {
      name: 'temporal-client-in-runs',
      severity: 'error',
      comment:
        "Starting, querying, updating and signalling runs is the runs room's (workers/runs/): nothing else loads the Temporal client (tools stand apart; a type-only import loads nothing).",
      from: { path: '^(activities|edge|workflows|workers)/', pathNot: '^workers/runs/' },
      to: { path: '^node_modules/@temporalio/client/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'tools-stand-apart',
      severity: 'error',
      comment:
        'Development and build tooling (tools/: the local supervisor, setup, the build, the compose checker) runs the platform; nothing of the platform imports it.',
      from: { path: '^(activities|edge|workflows|workers)/' },
      to: { path: '^tools/' },
    },
    {
      name: 'runs-not-to-edge',
      severity: 'error',
      comment:
        'The runs room serves the edge and the root alike: what the edge wants to know of runs (metrics, request ids) it hands in (observeRuns).',
      from: { path: '^workers/runs/' },
      to: { path: '^(edge|workers/(?!runs/))' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(test|dist|client)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.mts', '.js', '.mjs', '.json'] },
  },
};
