import type { Page } from 'playwright-core';

/**
 * Signs in to the dashboard at `base` with a project secret, as a browser's form post would, and answers the
 * session cookie (`name=value`) to send with later requests.
 */
export async function dashboardCookie(base: string, secret: string): Promise<string> {
  const signIn = await fetch(`${base}/dashboard/sign-in`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ secret }).toString(),
  });
  return signIn.headers.getSetCookie()[0]?.split(';')[0] ?? '';
}

/**
 * Signs in to the dashboard at `base` in a browser, as a person does: opens `from` (the sign-in page, or a
 * page that leads to it), types the secret, submits, and waits for the broadcasts page.
 */
export async function signInWithForm(
  page: Page,
  base: string,
  secret: string,
  from = '/dashboard/sign-in',
): Promise<void> {
  await page.goto(`${base}${from}`);
  await page.fill('#secret', secret);
  await page.click('button[type=submit]');
  await page.waitForURL(`${base}/dashboard/broadcasts`);
}

/**
 * A dashboard user as a browser without JavaScript is: form posts, the session cookie kept from the last
 * `Set-Cookie`, redirects not followed (the tests look at them), and the CSRF token read from a page.
 */
export class DashboardClient {
  cookie: string | undefined;

  constructor(readonly base: string) {}

  async get(path: string, headers: Record<string, string> = {}): Promise<Response> {
    return fetch(this.base + path, { redirect: 'manual', headers: this.headers(headers) });
  }

  async post(
    path: string,
    form: Record<string, string>,
    headers: Record<string, string> = {},
  ): Promise<Response> {
    const res = await fetch(this.base + path, {
      method: 'POST',
      redirect: 'manual',
      headers: this.headers({ 'content-type': 'application/x-www-form-urlencoded', ...headers }),
      body: new URLSearchParams(form).toString(),
    });
    const set = res.headers.getSetCookie()[0];
    if (set) this.cookie = set.split(';')[0];
    return res;
  }

  async signIn(secret: string): Promise<Response> {
    return this.post('/dashboard/sign-in', { secret });
  }

  /** The CSRF token of the page at `path`. */
  async csrf(path = '/dashboard/broadcasts'): Promise<string> {
    const body = await (await this.get(path)).text();
    const token = /name="_csrf" value="([^"]+)"/.exec(body)?.[1];
    if (!token) throw new Error(`no CSRF token on ${path}`);
    return token;
  }

  private headers(extra: Record<string, string>): Record<string, string> {
    return this.cookie ? { cookie: this.cookie, ...extra } : extra;
  }
}
