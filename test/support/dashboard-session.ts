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
