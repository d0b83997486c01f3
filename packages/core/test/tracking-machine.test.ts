import { describe, expect, it } from 'vitest';
import { isMachineClick, isMachineOpen } from '../src/tracking/tracking-machine.js';

const CHROME =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36';

describe('machine verdicts', () => {
  it('counts opens by mail-privacy proxies, and by clients that say nothing, as machines', () => {
    expect(isMachineOpen({ userAgent: CHROME, ip: '203.0.113.9' })).toBe(false);
    expect(isMachineOpen({ userAgent: 'Mozilla/5.0' })).toBe(true);
    expect(isMachineOpen({ userAgent: CHROME, ip: '17.58.101.4' })).toBe(true);
    expect(isMachineOpen({ userAgent: CHROME, ip: '::ffff:17.1.2.3' })).toBe(true);
    expect(isMachineOpen({ userAgent: CHROME, ip: '170.1.2.3' })).toBe(false);
    expect(
      isMachineOpen({
        userAgent:
          'Mozilla/5.0 (Windows NT 5.1; rv:11.0) Gecko Firefox/11.0 (via ggpht.com GoogleImageProxy)',
      }),
    ).toBe(true);
    expect(
      isMachineOpen({
        userAgent: 'YahooMailProxy; https://help.yahoo.com/kb/yahoo-mail-proxy-SLN28749.html',
      }),
    ).toBe(true);
    expect(isMachineOpen({})).toBe(true);
    expect(isMachineOpen({ userAgent: CHROME, method: 'HEAD' })).toBe(true);
  });

  it('counts HEAD checks, scanner and library agents as machine clicks, browsers as people', () => {
    expect(isMachineClick({ userAgent: CHROME, method: 'GET' })).toBe(false);
    expect(
      isMachineClick({ userAgent: 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) Mobile/15E148' }),
    ).toBe(false);
    expect(isMachineClick({ userAgent: CHROME, method: 'HEAD' })).toBe(true);
    expect(isMachineClick({ userAgent: '' })).toBe(true);
    expect(isMachineClick({ userAgent: 'python-requests/2.31.0' })).toBe(true);
    expect(isMachineClick({ userAgent: 'curl/8.5.0' })).toBe(true);
    expect(isMachineClick({ userAgent: 'Mozilla/5.0 (compatible; Barracuda Sentinel)' })).toBe(true);
    expect(isMachineClick({ userAgent: 'Mozilla/5.0 (compatible; bingbot/2.0)' })).toBe(true);
  });
});
