import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { buildOpenApiDocument } from '@mailroom/http';
import { describe, expect, it } from 'vitest';
import { matchRoute } from '../packages/http/src/routes/routes.js';

/**
 * The route table of the http package's README lists every route the handler serves (issue 29: it lacked
 * half of them): each method and path of the OpenAPI document, plus the ones outside it; and each row it
 * lists is a route the handler takes.
 */
const README = readFileSync(fileURLToPath(new URL('../packages/http/README.md', import.meta.url)), 'utf8');

/** `METHOD path` of each row of the table under "## Routes", `:param` written as `{param}`. */
function documentedRoutes(): Set<string> {
  const section = /## Routes[^\n]*\n([\s\S]*?)\n## /.exec(README)?.[1] ?? '';
  const routes = new Set<string>();
  for (const line of section.split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    const [methods, path] = [cells[1] ?? '', cells[2] ?? ''];
    const route = /^`([^`]+)`/.exec(path)?.[1];
    if (!route || !/^`[A-Z]/.test(methods)) continue;
    for (const method of methods.matchAll(/`([A-Z]+)`/g)) {
      routes.add(`${method[1]} ${route.replace(/:(\w+)/g, '{$1}')}`);
    }
  }
  return routes;
}

describe('the http README route table', () => {
  const documented = documentedRoutes();

  it('lists every route of the OpenAPI document and those outside it', () => {
    const doc = buildOpenApiDocument('') as { paths: Record<string, Record<string, unknown>> };
    const served = new Set<string>(['GET /openapi.json', 'GET /metrics', 'GET /dashboard']);
    for (const [path, methods] of Object.entries(doc.paths)) {
      for (const method of Object.keys(methods)) served.add(`${method.toUpperCase()} ${path}`);
    }
    expect([...served].filter((route) => !documented.has(route)).sort()).toEqual([]);
  });

  it('lists only routes the handler takes', () => {
    const outside = new Set(['GET /metrics', 'GET /dashboard']);
    const unknown = [...documented].filter((route) => {
      if (outside.has(route)) return false;
      const [method = '', path = ''] = route.split(' ');
      const match = matchRoute(path.replace(/\{(\w+)\}/g, 'x1'), true);
      return !match?.allow.includes(method);
    });
    expect(unknown).toEqual([]);
  });
});
