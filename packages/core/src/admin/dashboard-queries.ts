import { MailroomError } from '../base/errors.js';
import type { AuthContext } from '../context/auth-context.js';
import type { BaseContext } from '../context/base-context.js';
import { contentFromTemplate } from '../render/index.js';
import type { PreviewRenderer } from '../render/preview-renderer.js';
import { templateView } from '../resources/template-resources.js';
import type {
  DeliveryRecord,
  MailingKind,
  MailingRecord,
  MailingStatus,
  SourceJobRecord,
  TemplateRecord,
} from '../store/records.js';
import type {
  AccountStore,
  AudienceStore,
  DeliveryQueue,
  MailingStore,
  SourceJobStore,
} from '../store/store.js';
import type { MailroomReads } from './admin-types.js';
import type { DeliveryView, QueueDepth, SourceJobView } from './engine-views.js';
import type { MailingView } from './mailing-view.js';

/** Mailings still moving: their deliveries count towards the queue. */
const OPEN_STATUSES: readonly MailingStatus[] = ['queued', 'scheduled', 'sending'];

/** Mailings read per project and kind by {@link DashboardQueries.queueDepth}. */
const QUEUE_SCAN_LIMIT = 500;

const SAMPLE_RECIPIENT = { address: 'ada@example.com', name: 'Ada Lovelace' };

/** What the queries borrow from the engine, so that scoping and views stay defined in one place. */
export interface DashboardQueryDeps {
  resolveAuth(auth: string | AuthContext): Promise<AuthContext>;
  /** The project's mailing by ref; `NOT_FOUND` otherwise. */
  findMailing(auth: string | AuthContext, ref: string): Promise<MailingRecord>;
  view(mailing: MailingRecord): Promise<MailingView>;
  /** Renders previews off the main thread, within each project's render budget. */
  previews: PreviewRenderer;
}

/** The engine's read methods for dashboards and metrics (see `Mailroom` for their contracts). */
export type DashboardQueries = MailroomReads;

/**
 * Read methods over the store, every one scoped to the authenticated project (docs/architecture.md,
 * invariant 4): a ref of another project answers `NOT_FOUND`, exactly like a ref that does not exist.
 * Cursors are refs and addresses, never store ids.
 */
export function createDashboardQueries(ctx: BaseContext, deps: DashboardQueryDeps): DashboardQueries {
  // The read roles only: the dashboard never writes.
  const store: AccountStore &
    AudienceStore &
    MailingStore &
    SourceJobStore &
    Pick<DeliveryQueue, 'nextDueAt'> = ctx.store;

  async function findTemplate(auth: string | AuthContext, ref: string): Promise<TemplateRecord> {
    const { project } = await deps.resolveAuth(auth);
    const template = await store.getTemplate(project.id, ref);
    if (!template) throw new MailroomError('NOT_FOUND', `Template ${ref} not found`);
    return template;
  }

  return {
    async listMailings(auth, kind, page = {}) {
      const { project } = await deps.resolveAuth(auth);
      const limit = clampLimit(page.limit, 25, 200);
      let after: string | null = null;
      if (page.after) {
        // The cursor is the last ref of the previous page; a ref of another kind or project ends the listing.
        const last = await store.getMailing(project.id, page.after);
        if (last?.kind !== kind) return { items: [], next: null };
        after = last.id;
      }
      const rows = await store.listMailings(project.id, kind, { after, limit: limit + 1 });
      const items = await Promise.all(rows.slice(0, limit).map((m) => deps.view(m)));
      return { items, next: rows.length > limit ? (items.at(-1)?.ref ?? null) : null };
    },

    async searchDeliveries(auth, ref, search = {}) {
      const mailing = await deps.findMailing(auth, ref);
      const limit = clampLimit(search.limit, 50, 500);
      const prefix = normalizePrefix(search.prefix ?? '');
      const status = search.status;
      const rows: DeliveryRecord[] = [];
      let after = search.after ?? null;
      if (prefix !== '' && (after === null || byteCompare(after, prefix) < 0)) {
        // Addresses sort by bytes: the ones starting with `prefix` are `prefix` itself, then a run right after it.
        const exact = await store.findDelivery(mailing.id, prefix);
        if (exact && (status === undefined || exact.status === status)) rows.push(exact);
        after = prefix;
      }
      const fetched = await store.listDeliveries(mailing.id, {
        after,
        limit: limit + 1 - rows.length,
        ...(status ? { status } : {}),
      });
      for (const row of fetched) {
        if (!row.address.startsWith(prefix)) break;
        rows.push(row);
      }
      const items = rows.slice(0, limit).map(deliveryView);
      return { items, next: rows.length > limit ? (items.at(-1)?.address ?? null) : null };
    },

    async listSourceJobs(auth, ref) {
      const mailing = await deps.findMailing(auth, ref);
      return (await store.listSourceJobs(mailing.id)).map(sourceJobView);
    },

    async listTemplates(auth) {
      const { project } = await deps.resolveAuth(auth);
      return (await store.listTemplates(project.id)).map(templateView);
    },

    async getTemplate(auth, ref) {
      return templateView(await findTemplate(auth, ref));
    },

    async previewTemplate(auth, ref, sample = {}) {
      const context = await deps.resolveAuth(auth);
      // A project over its render budget is refused before the template is even read.
      deps.previews.admit(context.project.id);
      const template = await findTemplate(context, ref);
      // Parsed and rendered on the preview thread: a template built to spin costs its project's budget,
      // never the main thread that answers everyone.
      return deps.previews.render(
        context.project.id,
        {
          subject: template.subject ?? '',
          preheader: null,
          ...contentFromTemplate(template),
          variables: sample.variables ?? {},
          templateRef: template.ref,
          templateVersion: template.version,
        },
        {
          address: sample.recipient?.address || SAMPLE_RECIPIENT.address,
          name: sample.recipient?.name || SAMPLE_RECIPIENT.name,
          variables: {},
          traits: {},
        },
      );
    },

    async listGroups(auth) {
      const { project } = await deps.resolveAuth(auth);
      return (await store.listGroups(project.id)).map((g) => ({
        ref: g.ref,
        name: g.name,
        doubleOptIn: g.doubleOptIn ?? false,
        members: g.members,
        createdAt: g.createdAt,
      }));
    },

    async queueDepth() {
      await ctx.ready();
      const depth: QueueDepth = { due: 0, scheduled: 0, sending: 0, oldestDueAt: null };
      for (const project of await store.listProjects()) {
        for (const kind of ['broadcast', 'message'] as const) {
          await scanOpenMailings(project.id, kind, async (mailing) => {
            const counts = await store.countDeliveries(mailing.id);
            if (mailing.status === 'scheduled') depth.scheduled += counts.queued;
            else depth.due += counts.queued;
            depth.sending += counts.sending;
          });
        }
      }
      depth.oldestDueAt = (await store.nextDueAt()) ?? null;
      return depth;
    },
  };

  /** Calls `visit` for each unfinished mailing among the project's newest {@link QUEUE_SCAN_LIMIT} of `kind`. */
  async function scanOpenMailings(
    projectId: string,
    kind: MailingKind,
    visit: (mailing: MailingRecord) => Promise<void>,
  ): Promise<void> {
    let after: string | null = null;
    for (let seen = 0; seen < QUEUE_SCAN_LIMIT; ) {
      const rows = await store.listMailings(projectId, kind, { after, limit: 100 });
      for (const mailing of rows) if (OPEN_STATUSES.includes(mailing.status)) await visit(mailing);
      seen += rows.length;
      if (rows.length < 100) return;
      after = rows.at(-1)?.id ?? null;
    }
  }
}

/** A page size: `fallback` when not given, else within 1..`max`. */
export function clampLimit(limit: number | undefined, fallback: number, max: number): number {
  if (limit === undefined || !Number.isFinite(limit)) return fallback;
  return Math.max(1, Math.min(max, Math.floor(limit)));
}

/** Addresses keep their local part as given and have their domain lower-cased; a prefix follows suit. */
export function normalizePrefix(prefix: string): string {
  const trimmed = prefix.trim();
  const at = trimmed.indexOf('@');
  return at < 0 ? trimmed : trimmed.slice(0, at + 1) + trimmed.slice(at + 1).toLowerCase();
}

/** The stores' order: strings compared by their UTF-8 bytes. */
function byteCompare(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

function deliveryView(d: DeliveryRecord): DeliveryView {
  return {
    address: d.address,
    name: d.name,
    status: d.status,
    attempts: d.attempts,
    nextAttemptAt: d.nextAttemptAt,
    messageId: d.messageId,
    lastResponse: d.lastResponse,
    lastError: d.lastError,
    sentAt: d.sentAt,
    createdAt: d.createdAt,
    updatedAt: d.updatedAt,
    hasContent: d.content !== null,
  };
}

/** A source job as the API shows it (its URL without credentials or query). */
export function sourceJobView(job: SourceJobRecord): SourceJobView {
  const config = (job.config ?? {}) as { ref?: unknown; label?: unknown; url?: unknown };
  const name =
    typeof config.ref === 'string' ? config.ref : typeof config.label === 'string' ? config.label : '';
  return {
    kind: job.kind,
    name,
    url: typeof config.url === 'string' ? displayUrl(config.url) : null,
    status: job.status,
    rowsDone: job.rowsDone,
    rowsFailed: job.rowsFailed,
    rowErrors: job.rowErrors,
    error: job.error,
    createdAt: job.createdAt,
    updatedAt: job.updatedAt,
  };
}

/** A URL fit to show: without credentials, query or fragment, which may carry tokens. */
function displayUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = '';
    parsed.password = '';
    parsed.search = '';
    parsed.hash = '';
    return parsed.toString();
  } catch {
    return '';
  }
}
