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
      from: { path: '^packages/(memory|sql|smtp|http)/' },
      to: { path: '^packages/', pathNot: ['^packages/$1/', '^packages/core/'] },
    },
    {
      // The one declared exception: @mailroom/ses sends the MIME of @mailroom/smtp's composer, byte for byte
      // what the SMTP transport sends (a dependency in its package.json). It may take that, nothing else.
      name: 'adapter-imports-only-core',
      severity: 'error',
      comment: '@mailroom/ses imports @mailroom/core, and @mailroom/smtp by its name only (the composer).',
      from: { path: '^packages/ses/' },
      to: {
        path: '^packages/',
        pathNot: ['^packages/ses/', '^packages/core/', '^packages/smtp/src/index\\.ts$'],
      },
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
