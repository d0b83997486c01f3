import { Liquid, type LiquidOptions } from 'liquidjs';

/**
 * Defaults of the per-render limits. They bound what one hostile or careless template can cost a worker;
 * a normal email stays far below both (render times: BENCHMARKS.md, `delivery-corpus`).
 */
export const RENDER_LIMIT_DEFAULTS = {
  /**
   * Longest time one part (subject, preheader, HTML, text) may render, in milliseconds. Generous so a GC
   * pause on a busy machine never fails a good template; a runaway loop still stops within a second.
   */
  renderLimitMs: 1000,
  /**
   * Allocation budget of one part render, in liquidjs units (roughly characters or array items created by
   * ranges and string filters). 20M stops `(1..100000000)` and string doubling before memory suffers.
   */
  memoryLimit: 20_000_000,
} as const;

/**
 * Largest Liquid source one `parse` accepts, in characters. 5M is far above any real email (a big MJML
 * newsletter compiles to about 40 KB) and keeps a pathological template from pinning a core.
 */
export const PARSE_LIMIT = 5_000_000;

/** Tags that read other templates from a file system: an email template must stay self-contained. */
const FILE_TAGS = ['include', 'render', 'layout'] as const;

/** Filters that escape: on the HTML engine they are marked raw, or the output escape would escape twice. */
const ESCAPE_FILTERS = ['escape', 'xml_escape', 'escape_once'] as const;

/** The two flavours of engine: `html` escapes every output for HTML, `text` writes values as they are. */
export type LiquidEngineKind = 'html' | 'text';

/**
 * Creates a Liquid engine locked down for untrusted data: no file system (the file tags are removed, so a
 * template using them fails to parse, and the lookup map is empty in case a tag is added back), properties
 * read only from own keys (no `constructor`, no `__proto__`), unknown filters refused at parse time, and a
 * parse size limit. `lenientIf` lets `default` and `if` test a missing variable even with strict variables.
 */
export function createLiquidEngine(kind: LiquidEngineKind): Liquid {
  const options: LiquidOptions = {
    templates: {},
    relativeReference: false,
    dynamicPartials: false,
    ownPropertyOnly: true,
    strictFilters: true,
    strictVariables: false,
    lenientIf: true,
    parseLimit: PARSE_LIMIT,
    renderLimit: RENDER_LIMIT_DEFAULTS.renderLimitMs,
    memoryLimit: RENDER_LIMIT_DEFAULTS.memoryLimit,
  };
  if (kind === 'html') options.outputEscape = 'escape';
  const engine = new Liquid(options);
  for (const name of FILE_TAGS) Reflect.deleteProperty(engine.tags, name);
  if (kind === 'html') {
    for (const name of ESCAPE_FILTERS) {
      const filter = engine.filters[name];
      if (filter === undefined) continue;
      const handler = typeof filter === 'function' ? filter : filter.handler;
      engine.registerFilter(name, { handler, raw: true });
    }
  }
  return engine;
}

/** The shared engines: created once per process, since an engine holds no per-render state. */
export const liquidEngines: Readonly<Record<LiquidEngineKind, Liquid>> = {
  html: createLiquidEngine('html'),
  text: createLiquidEngine('text'),
};
