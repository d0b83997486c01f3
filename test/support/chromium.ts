/**
 * Chromium for the browser tests (playwright-core drives a system browser; it never downloads one).
 * Every browser test gets its browser from here: {@link launchChromium} in a `beforeAll` given
 * {@link CHROMIUM_SETUP_TIMEOUT_MS}. The executable is `MAILROOM_CHROMIUM` if set, else `chromium`,
 * `chromium-browser` or `google-chrome` on `PATH`; on a machine that has none but can install one (root and
 * `apt-get`), Debian's `chromium` is installed once, test files in other forks waiting on a lock file.
 * Otherwise the set-up fails with one line that says how to get one: a browser test never skips silently.
 */
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { findOrInstall, type SystemTool } from './find-or-install.js';

/** The names looked up on `PATH`, in order. */
export const CHROMIUM_NAMES = ['chromium', 'chromium-browser', 'google-chrome'] as const;

/**
 * Time for a `beforeAll` that launches Chromium: installing it with apt-get (an index update and a
 * download of about 100 MB) can take minutes on a cold machine; a found browser starts in a second.
 */
export const CHROMIUM_SETUP_TIMEOUT_MS = 15 * 60_000;

/** Flags for a headless browser in a container: no sandbox (root), no GPU, no traffic of its own. */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Where the browser comes from (test/support/find-or-install.ts). */
const CHROMIUM: SystemTool = {
  debPackage: 'chromium',
  names: CHROMIUM_NAMES,
  envVar: 'MAILROOM_CHROMIUM',
  missing: 'No Chromium for the browser tests',
  howToInstall:
    'install Chromium (Debian/Ubuntu: sudo apt-get install -y chromium) or set MAILROOM_CHROMIUM to a Chromium or Chrome executable',
};

/**
 * The path of a Chromium executable, found or (where the machine allows) installed on first call; cached
 * for the process.
 * @throws Error with one line saying how to install a browser, when there is none and none can be installed
 */
export function chromiumExecutable(): Promise<string> {
  return findOrInstall(CHROMIUM);
}

/**
 * A persistent headless Chromium context on `profileDir` with {@link CHROMIUM_ARGS} (plus `args`).
 * Call it in a `beforeAll(..., CHROMIUM_SETUP_TIMEOUT_MS)`.
 */
export async function launchChromium(
  profileDir: string,
  options: Omit<NonNullable<Parameters<typeof chromium.launchPersistentContext>[1]>, 'executablePath'> = {},
): Promise<BrowserContext> {
  return chromium.launchPersistentContext(profileDir, {
    ...options,
    executablePath: await chromiumExecutable(),
    args: [...CHROMIUM_ARGS, ...(options.args ?? [])],
  });
}

/** A browser page with what the pages it showed did wrong, for a test to expect empty. */
export interface WatchedPage {
  /** The context's first page (or a new one). */
  readonly page: Page;
  /**
   * Content-Security-Policy refusals, script errors and dialogs (none of our pages opens one: a dialog is
   * a script that ran), as text.
   */
  readonly problems: string[];
  /** Requests to any origin but `base`'s: the pages load nothing from elsewhere. */
  readonly foreign: string[];
}

/**
 * The first page of `context`, watched for problems and for requests outside `base` (the app under
 * test); the context's default timeout set to 10 s, so that a missing element fails its test rather
 * than hanging it until the test's own timeout.
 */
export async function watchedPage(context: BrowserContext, base: string): Promise<WatchedPage> {
  context.setDefaultTimeout(10_000);
  const page = context.pages()[0] ?? (await context.newPage());
  const problems: string[] = [];
  const foreign: string[] = [];
  page.on('console', (message) => {
    if (/Content Security Policy|Refused to/i.test(message.text())) problems.push(message.text());
  });
  page.on('pageerror', (error) => problems.push(error.message));
  page.on('dialog', (dialog) => {
    problems.push(`dialog: ${dialog.message()}`);
    void dialog.dismiss();
  });
  page.on('request', (request) => {
    if (!request.url().startsWith(base)) foreign.push(request.url());
  });
  return { page, problems, foreign };
}
