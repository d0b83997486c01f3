import type { AuthContext } from '../context/auth-context.js';
import type { TemplateSample, TemplateView } from '../resources/resource-types.js';
import type { Page } from '../store/paging.js';
import type {
  AudienceGroupRecord,
  DkimConfig,
  MailingKind,
  ProfileStatus,
  ProjectRecord,
  RenderedContent,
  SecretMode,
  SenderRecord,
  SuppressionReason,
  TemplateFormat,
  TemplateRecord,
} from '../store/records.js';
import type {
  AudienceGroupView,
  DeliverySearch,
  DeliveryView,
  QueueDepth,
  SourceJobView,
} from './engine-views.js';
import type { MailingView } from './mailing-view.js';

/** Admin operations (no project secret: the embedding app or the CLI calls them). */
export interface MailroomAdmin {
  /** Create a project; the secret is returned once and stored only as a hash. */
  createProject(input: {
    name: string;
    sandbox?: boolean;
  }): Promise<{ project: ProjectRecord; secret: string }>;
  /** Issue another secret for a project. */
  createSecret(projectId: string, mode?: SecretMode): Promise<string>;
  addSender(
    projectId: string,
    input: { address: string; name?: string; dkim?: DkimConfig },
  ): Promise<SenderRecord>;
  /**
   * Create a template or a new version of it. MJML is compiled now; invalid MJML or Liquid is refused
   * (`TEMPLATE_INVALID` naming `sourceName`, or `template <ref>`, and the line).
   */
  createTemplate(
    projectId: string,
    input: {
      ref: string;
      format: TemplateFormat;
      source: string;
      /** The default subject (Liquid) of requests that give none. */
      subject?: string;
      /** Names the source in error messages, for example the file it was read from. @default `template <ref>` */
      sourceName?: string;
    },
  ): Promise<TemplateRecord>;
  createAudienceGroup(
    projectId: string,
    input: { ref: string; name?: string; doubleOptIn?: boolean },
  ): Promise<AudienceGroupRecord>;
  setSubscription(projectId: string, address: string, status: ProfileStatus): Promise<void>;
  suppress(projectId: string, address: string, reason: SuppressionReason, detail?: string): Promise<void>;
  unsuppress(projectId: string, address: string): Promise<boolean>;
}

/** The engine's read methods for dashboards and metrics (`Mailroom` extends it). */
export interface MailroomReads {
  /**
   * The project's mailings of one kind, newest first, each with its counts. `page.after` is the `next`
   * of the previous page (a ref). @default limit 25, at most 200
   */
  listMailings(
    auth: string | AuthContext,
    kind: MailingKind,
    page?: { after?: string; limit?: number },
  ): Promise<Page<MailingView>>;
  /**
   * A mailing's deliveries by address, optionally only those whose address starts with `search.prefix`
   * or of one status; `next` is the cursor of the next page. `NOT_FOUND` for another project's ref.
   */
  searchDeliveries(
    auth: string | AuthContext,
    ref: string,
    search?: DeliverySearch,
  ): Promise<Page<DeliveryView>>;
  /** The source jobs of a mailing (audience groups, CSV files) with their progress and row errors. */
  listSourceJobs(auth: string | AuthContext, ref: string): Promise<SourceJobView[]>;
  /** The project's templates, by ref. */
  listTemplates(auth: string | AuthContext): Promise<TemplateView[]>;
  /** One template of the project; `NOT_FOUND` otherwise. */
  getTemplate(auth: string | AuthContext, ref: string): Promise<TemplateView>;
  /**
   * A template rendered for sample data, as a delivery would be (HTML escaped, text derived, subject on
   * one line). `TEMPLATE_INVALID` or `RENDER_FAILED` when it cannot be rendered.
   */
  previewTemplate(auth: string | AuthContext, ref: string, sample?: TemplateSample): Promise<RenderedContent>;
  /** The project's audience groups, by ref, with member counts. */
  listGroups(auth: string | AuthContext): Promise<AudienceGroupView[]>;
  /**
   * Deliveries waiting across every project (no secret: for metrics). An estimate bounded in cost, see
   * {@link QueueDepth}.
   */
  queueDepth(): Promise<QueueDepth>;
}
