import { html, type SafeHtml } from '../../pages/html.js';
import { bareLayout } from '../layout.js';

/** The sign-in form: the project secret, posted to the dashboard and kept nowhere but the server's check. */
export function signInPage(nonce: string, root: string, error?: string): SafeHtml {
  return bareLayout(
    nonce,
    'Sign in',
    html`<div class="signin card"><h1>Mailroom dashboard</h1><p class="muted">Sign in with a secret of your project. The dashboard shows that project only.</p>${
      error && html`<p class="notice error" role="alert">${error}</p>`
    }<form method="post" action="${root}/sign-in"><label for="secret">Project secret</label><input id="secret" name="secret" type="password" autocomplete="off" spellcheck="false" required autofocus><button type="submit" class="primary">Sign in</button></form></div>`,
  );
}
