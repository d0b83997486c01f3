import type { Mailroom, ProjectRecord, Store } from '@mailroom/core';

/** The sender identity of the demo project. */
export const DEMO_SENDER = 'demo@mailroom.local';
/** The ref of the demo project's template. */
export const DEMO_TEMPLATE_REF = 'welcome';

/** The demo project just created, with its secret (to print once). */
export interface DemoProject {
  /** The project "Demo". */
  project: ProjectRecord;
  /** Its live secret: the only moment it exists in clear. */
  secret: string;
  /** The sender identity's address. */
  sender: string;
  /** The ref of the MJML template. */
  templateRef: string;
  /** The template's MJML, which `serve` writes to {@link DEMO_TEMPLATE_FILE} for you to edit. */
  source: string;
}

/**
 * The file the printed `template add` command names: the first `serve` writes it next to its SQLite
 * file, or in the working directory for a database server.
 */
export const DEMO_TEMPLATE_FILE = 'welcome.mjml';

/**
 * How the printed commands start the CLI, so that they run as printed where the server was started:
 * `npx --yes pnpm@10 mailroom` in a clone (the quick start runs `npx --yes pnpm@10 start`, and the
 * root package's `mailroom` script runs the CLI from its sources), `npx mailroom` elsewhere (an app with
 * `@mailroom/cli` installed). A bare `mailroom` is on no PATH unless installed globally.
 */
export function cliCommandOf(env: Readonly<Record<string, string | undefined>>): string {
  const fromCloneScript = env.npm_lifecycle_event !== undefined && env.npm_package_name === 'mailroom';
  return fromCloneScript ? 'npx --yes pnpm@10 mailroom' : 'npx mailroom';
}

/**
 * The demo's MJML. System fonts only: MJML's default font (Ubuntu) would make every opened mail load a
 * stylesheet from Google Fonts, a request to a third party that tells it the mail was opened.
 */
const welcomeMjml = (hint: string, file: string) => `<mjml>
  <mj-head>
    <mj-title>Welcome to Mailroom</mj-title>
    <mj-preview>Your first message from Mailroom</mj-preview>
    <mj-attributes>
      <mj-all font-family="-apple-system, 'Segoe UI', Helvetica, Arial, sans-serif" />
    </mj-attributes>
  </mj-head>
  <mj-body background-color="#f4f4f5">
    <mj-section background-color="#ffffff" padding="24px">
      <mj-column>
        <mj-text font-size="22px" font-weight="bold">Hello {{ recipient.firstName | default: "there" }},</mj-text>
        <mj-text font-size="16px" line-height="24px">
          This message was rendered from the MJML template "welcome" and delivered by Mailroom.
          Replace it with your own: edit ${file}, then run ${hint}
        </mj-text>
        <mj-text font-size="13px" color="#71717a">Sent to {{ recipient.address }}</mj-text>
      </mj-column>
    </mj-section>
  </mj-body>
</mjml>`;

/**
 * On a database with no project yet, creates the demo project ("Demo"), its sender identity and the
 * `welcome` MJML template, and returns them with the secret; on any other database returns `undefined`
 * (a secret exists only at creation, so later starts have none to show).
 */
export async function ensureDemoProject(
  mailroom: Mailroom,
  store: Store,
  printed: { cli?: string; database?: string; file?: string } = {},
): Promise<DemoProject | undefined> {
  if ((await store.listProjects()).length > 0) return undefined;
  const { project, secret } = await mailroom.admin.createProject({ name: 'Demo' });
  await mailroom.admin.addSender(project.id, { address: DEMO_SENDER, name: 'Mailroom Demo' });
  const source = welcomeMjml(
    templateAddHint(project.id, printed.database, printed.cli, printed.file),
    printed.file ?? DEMO_TEMPLATE_FILE,
  );
  await mailroom.admin.createTemplate(project.id, {
    ref: DEMO_TEMPLATE_REF,
    format: 'mjml',
    subject: 'Welcome to Mailroom, {{ recipient.firstName | default: "friend" }}',
    source,
  });
  return { project, secret, sender: DEMO_SENDER, templateRef: DEMO_TEMPLATE_REF, source };
}

/**
 * The command that replaces the demo template, as printed (in the welcome mail and by `serve`); `database`
 * is the `--database` flag's value, for a database other than the default; `cli` how the CLI is started
 * ({@link cliCommandOf}); `file` the template's path from the working directory.
 */
export function templateAddHint(
  projectId: string,
  database?: string,
  cli = 'npx mailroom',
  file = DEMO_TEMPLATE_FILE,
): string {
  const flag = database === undefined ? '' : ` --database ${shellWord(database)}`;
  return `${cli} template add --project ${projectId} --ref ${DEMO_TEMPLATE_REF} --file ${shellWord(file)}${flag}`;
}

/** A path as one word of a shell command: as it is when it is plain, else in single quotes. */
export function shellWord(word: string): string {
  return /^[\w./:@%+=,-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`;
}

/** A ready `curl` line that sends one message from the demo sender with the welcome template. */
export function demoCurlLine(baseUrl: string, secret: string, sender: string, templateRef: string): string {
  const body = JSON.stringify({
    subject: 'Hello {{ recipient.firstName }}',
    sender,
    template: { ref: templateRef },
    recipients: [{ address: 'ada@example.test', name: 'Ada Lovelace' }],
  });
  return `curl -s ${baseUrl}/send/mail -H "Authorization: Bearer ${secret}" -H "Content-Type: application/json" -d '${body}'`;
}
