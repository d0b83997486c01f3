import type { ProjectRecord, ProjectSecretRecord, SenderRecord, TemplateRecord } from './records.js';

/**
 * The accounts of an installation: projects and their secrets, sender identities, templates, and the
 * installation's settings. Read on every request (`findSecret`, `findSender`, `getTemplate`), written by
 * the admin API. Every rule of `Store` (store.ts) applies.
 */
export interface AccountStore {
  // Projects and secrets

  /** Insert a project and its first secret, atomically. */
  createProject(project: ProjectRecord, secret: ProjectSecretRecord): Promise<void>;
  /** Add another secret to an existing project (rotation). */
  addProjectSecret(secret: ProjectSecretRecord): Promise<void>;
  /** Find a secret by its SHA-256 hex digest, with its project. */
  findSecret(hash: string): Promise<{ project: ProjectRecord; secret: ProjectSecretRecord } | undefined>;
  /** A project by id. */
  getProject(id: string): Promise<ProjectRecord | undefined>;
  /** All projects, oldest first. */
  listProjects(): Promise<ProjectRecord[]>;

  // Sender identities

  /**
   * Insert a sender identity. `CONFLICT` if (projectId, address) exists, with the message
   * `sender <address> already exists in project <projectId>`.
   */
  addSender(sender: SenderRecord): Promise<void>;
  /** The sender identity with exactly this normalized address in the project. */
  findSender(projectId: string, address: string): Promise<SenderRecord | undefined>;

  // Templates

  /** Insert a template, or replace the one with the same (projectId, ref) (the caller bumps `version`). */
  putTemplate(template: TemplateRecord): Promise<void>;
  /** A template by ref in the project. */
  getTemplate(projectId: string, ref: string): Promise<TemplateRecord | undefined>;
  /** The project's templates, by ref. */
  listTemplates(projectId: string): Promise<TemplateRecord[]>;

  // Settings of the installation

  /**
   * A setting of the whole installation (not of one project), created on first use: if no setting `name`
   * exists, store `value`. Returns the stored value.
   *
   * Race guarantee: of concurrent calls with one name (processes included, when
   * `capabilities.multiProcess`), every one returns the same value: the one stored first.
   */
  ensureSetting(name: string, value: string, now: Date): Promise<string>;
}
