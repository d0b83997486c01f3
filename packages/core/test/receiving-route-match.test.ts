import { describe, expect, it } from 'vitest';
import { matchRoute, ROUTE_PATTERN, splitAddress } from '../src/receiving/route-match.js';
import type { ReceivingRouteRecord } from '../src/store/receiving-store.js';

const route = (pattern: string): ReceivingRouteRecord => ({
  id: `rte_${pattern}`,
  projectId: 'prj_1',
  domain: 'in.example.com',
  pattern,
  destination: { kind: 'store' },
  createdAt: new Date(0),
});

describe('receiving route matching', () => {
  const routes = [route('*'), route('reply+*'), route('reply+c*'), route('support')];

  it('prefers an exact local part, then the longest prefix, then the catch-all', () => {
    expect(matchRoute(routes, 'support')?.pattern).toBe('support');
    expect(matchRoute(routes, 'Support')?.pattern).toBe('support');
    expect(matchRoute(routes, 'reply+c_12')?.pattern).toBe('reply+c*');
    expect(matchRoute(routes, 'reply+x')?.pattern).toBe('reply+*');
    expect(matchRoute(routes, 'sales')?.pattern).toBe('*');
  });

  it('takes nothing without a catch-all', () => {
    expect(matchRoute([route('support'), route('reply+*')], 'sales')).toBeUndefined();
    expect(matchRoute([route('reply+*')], 'reply')).toBeUndefined();
  });

  it('splits at the last @ and lower-cases the domain only', () => {
    expect(splitAddress('"a@b"@In.Example.COM')).toEqual({ local: '"a@b"', domain: 'in.example.com' });
    expect(splitAddress('Ana@x.test')).toEqual({ local: 'Ana', domain: 'x.test' });
    expect(splitAddress('@x.test')).toBeUndefined();
    expect(splitAddress('ana@')).toBeUndefined();
  });

  it('accepts local parts, prefixes and * as patterns, and nothing else', () => {
    for (const ok of ['support', 'reply+*', '*', 'a.b-c_d']) expect(ROUTE_PATTERN.test(ok)).toBe(true);
    for (const bad of ['', 'a b', 'a*b', '**', 'x@y', 'a'.repeat(65)])
      expect(ROUTE_PATTERN.test(bad)).toBe(false);
  });
});
