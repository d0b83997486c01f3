/**
 * Dependency rules for the packages' sources, checked by `depcruise` in the test command (so in CI).
 * Type-only imports count: a circle of types is still a circle for a reader.
 * @type {import('dependency-cruiser').IConfiguration}
 */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'No import circle in any package, type-only imports included.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'adapter-imports-only-core',
      severity: 'error',
      comment:
        'An adapter package imports @mailroom/core and nothing of another adapter package; only the cli ' +
        'assembles them.',
      from: { path: '^packages/(memory|sql|smtp|ses|http)/' },
      to: { path: '^packages/', pathNot: ['^packages/$1/', '^packages/core/'] },
    },
    {
      name: 'no-relative-import-across-packages',
      severity: 'error',
      comment:
        'A package reaches another one by its name (its exports), never into its src by a relative path.',
      from: { path: '^packages/([^/]+)/' },
      // A package name resolves through tsconfig's paths: 'aliased' (and 'local' too), which is allowed.
      to: {
        path: '^packages/',
        pathNot: '^packages/$1/',
        dependencyTypes: ['local'],
        dependencyTypesNot: ['aliased'],
      },
    },
  ],
  options: {
    includeOnly: '^packages/[^/]+/src/',
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['mailroom-source', 'import', 'types'],
      extensions: ['.ts', '.js'],
    },
  },
};
