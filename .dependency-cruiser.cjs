/**
 * Dependency rules for the packages' sources, checked by `depcruise` in the test command (so in CI).
 * Type-only imports count: a circle of types is still a circle for a reader.
 *
 * The core's folders stand in ranks (docs/architecture.md, "The layers"): a folder imports only folders of
 * its own rank or below, never one above. Within the platform and the capabilities, a sideways import is
 * allowed only where SIDEWAYS below declares it, with its reason; anything else is an error.
 * `test/dependency-layers.test.ts` adds forbidden imports to a copy and sees these rules fail.
 * @type {import('dependency-cruiser').IConfiguration}
 */
const CORE = 'packages/core/src';

/** The core's folders by rank, lowest first. */
const RANKS = [
  { rank: 'ground', folders: ['base'] },
  { rank: 'ground', folders: ['store'] },
  { rank: 'platform', folders: ['events', 'fetch', 'mime', 'render', 'request', 'transport'] },
  { rank: 'context', folders: ['context'] },
  {
    rank: 'capabilities',
    folders: [
      'accept',
      'admin',
      'audience',
      'automations',
      'broadcasts',
      'consent',
      'delivery',
      'domains',
      'inbound',
      'keys',
      'pauses',
      'receiving',
      'resources',
      'retention',
      'signup',
      'sources',
      'tracking',
      'unsubscribe',
      'webhooks',
    ],
  },
  { rank: 'engine', folders: ['engine'] },
  { rank: 'entries', folders: ['testing'] },
];

/** Sideways imports within one rank, each with its reason. Folders of one rank import nothing else of it. */
const SIDEWAYS = {
  mime: { transport: 'composes the message the Transport contract describes' },
  accept: {
    broadcasts: 'a later batch of a scheduled broadcast is realigned to its schedule',
    keys: "authenticates secrets and checks a key's sender domains at accept",
    sources: 'probes CSV sources (byte ranges) before accepting them',
  },
  admin: {
    delivery: 'the activity charts name destination groups and read delivery events for progress',
    domains: "the activity charts show today's warm-up of sender domains",
    keys: 'a new project gets its first key',
    pauses: "the activity charts draw pauses and the guard's rules",
    resources: "a new template version is written by the resources' compare-and-set; template views",
    consent: 'setting a subscription is a consent change, kept in the consent history',
  },
  signup: {
    consent:
      'a signup and its confirmation are consent changes (pending, subscribed), kept in the consent history',
  },
  audience: {
    admin: "audience listings reuse the read side's paging and source-job views",
    sources: "a CSV import is probed like a broadcast's CSV source",
    consent: "a profile's detail carries its topics and consent history; erasure hashes that history",
  },
  automations: {
    accept: "a tracked event is written in the app's transaction as a send is (inAppTransaction)",
    keys: "authenticates the secret inside the app's transaction, as accept does",
    consent: "an update-contact step's topic states are a consent change, kept in the consent history",
  },
  delivery: {
    domains: 'signing keys and the sending policy; MX lookups; warm-up schedules',
    inbound: "a relay's refusal at send time is read and recorded as a bounce",
    sources: 'the worker expands source jobs',
    tracking: 'tracked links and the open pixel are applied at render time',
    unsubscribe:
      "a message's links: the List-Unsubscribe headers, {{ unsubscribe_url }} and {{ preferences_url }}",
    consent: "a topic mailing's deliveries are checked against the contacts' topic states at claim time",
  },
  receiving: {
    inbound: 'a reply is matched to the delivery it answers by Message-ID, as bounce reports are',
    domains:
      'SPF, DKIM and DMARC of received mail use the DNS resolver and mailauth loader of sender domains',
  },
  keys: { domains: "a key's sender domains are normalised as domain names" },
  pauses: { delivery: 'the reputation guard follows delivery outcomes' },
  sources: { consent: 'a topic source leaves out, page by page, the contacts whose topic state says no' },
  unsubscribe: {
    consent:
      "a topic broadcast's link leaves that topic only; the preference centre saves through the consent change path",
  },
};

const levelOf = new Map(RANKS.flatMap(({ folders }, level) => folders.map((folder) => [folder, level])));
const folders = [...levelOf.keys()];
const anyOf = (names) => `^${CORE}/(${names.join('|')})/`;

/** One rule per folder: no folder of a higher level, and no folder of its own level but those declared. */
const layerRules = folders.map((folder) => {
  const level = levelOf.get(folder);
  const sideways = Object.keys(SIDEWAYS[folder] ?? {});
  const forbidden = folders.filter(
    (other) =>
      levelOf.get(other) > level ||
      (levelOf.get(other) === level && other !== folder && !sideways.includes(other)),
  );
  return {
    name: `core-layers-${folder}`,
    severity: 'error',
    comment:
      `core/${folder} (${RANKS[level].rank}) imports only lower ranks` +
      (sideways.length > 0 ? ` and, sideways, ${sideways.join(', ')} (declared in SIDEWAYS)` : '') +
      '. See docs/architecture.md, "The layers".',
    from: { path: `^${CORE}/${folder}/` },
    to: { path: forbidden.length > 0 ? anyOf(forbidden) : '^$' },
  };
});

/**
 * The folders of the http and cli packages, by rank, lowest first (their READMEs, "Source layout"): a folder
 * imports only folders of lower ranks, never one of its own rank or above; the files at a package's root
 * (index.ts, the cli's main.ts and bin.ts) are its entries, and no folder imports them.
 */
const PACKAGE_RANKS = {
  http: [
    ['neutral'],
    ['pages', 'limits', 'metrics', 'openapi'],
    ['routes'],
    ['dashboard'],
    ['handler'],
    ['binders'],
  ],
  cli: [['output'], ['flags'], ['server'], ['admin'], ['commands']],
};

const packageLayerRules = Object.entries(PACKAGE_RANKS).flatMap(([pkg, ranks]) => {
  const src = `packages/${pkg}/src`;
  const folderRules = ranks.flatMap((rank, level) =>
    rank.map((folder) => {
      const forbidden = ranks
        .slice(level)
        .flat()
        .filter((other) => other !== folder);
      return {
        name: `${pkg}-layers-${folder}`,
        severity: 'error',
        comment: `${pkg}/${folder} imports only folders of lower ranks (PACKAGE_RANKS).`,
        from: { path: `^${src}/${folder}/` },
        to: { path: forbidden.length > 0 ? `^${src}/(${forbidden.join('|')})/` : '^$' },
      };
    }),
  );
  return [
    ...folderRules,
    {
      name: `${pkg}-root-is-the-entry`,
      severity: 'error',
      comment: `The files at the root of ${pkg}/src are its entries; no folder imports them.`,
      from: { path: `^${src}/[^/]+/` },
      to: { path: `^${src}/[^/]+\\.ts$` },
    },
  ];
});

module.exports = {
  forbidden: [
    ...layerRules,
    ...packageLayerRules,
    {
      name: 'core-root-is-the-entry',
      severity: 'error',
      comment: 'Only index.ts stands at the root of the core; nothing inside the core imports it.',
      from: { path: `^${CORE}/[^/]+/` },
      to: { path: `^${CORE}/index\\.ts$` },
    },
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
