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
}

/**
 * The demo's MJML. System fonts only: MJML's default font (Ubuntu) would make every opened mail load a
 * stylesheet from Google Fonts, a request to a third party that tells it the mail was opened.
 */
const welcomeMjml = (projectId: string) => `<mjml>
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
          Replace it with your own: ${templateAddHint(projectId)}
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
export async function ensureDemoProject(mailroom: Mailroom, store: Store): Promise<DemoProject | undefined> {
  if ((await store.listProjects()).length > 0) return undefined;
  const { project, secret } = await mailroom.admin.createProject({ name: 'Demo' });
  await mailroom.admin.addSender(project.id, { address: DEMO_SENDER, name: 'Mailroom Demo' });
  await mailroom.admin.createTemplate(project.id, {
    ref: DEMO_TEMPLATE_REF,
    format: 'mjml',
    subject: 'Welcome to Mailroom, {{ recipient.firstName | default: "friend" }}',
    source: welcomeMjml(project.id),
  });
  return { project, secret, sender: DEMO_SENDER, templateRef: DEMO_TEMPLATE_REF };
}

/**
 * The command that replaces the demo template, as printed (in the welcome mail and by `serve`); `database`
 * is the `--database` flag's value, for a database other than the default.
 */
export function templateAddHint(projectId: string, database?: string): string {
  const flag = database === undefined ? '' : ` --database ${database}`;
  return `mailroom template add --project ${projectId} --ref ${DEMO_TEMPLATE_REF} --file welcome.mjml${flag}`;
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
