import { z } from 'zod';
import { MailroomError } from '../base/errors.js';
import type { AuthContext } from '../context/auth-context.js';
import type { BaseContext } from '../context/base-context.js';
import type { ResolveAuth } from '../context/capability.js';
import { toValidationIssues } from '../request/index.js';
import type { ProjectBrandRecord } from '../store/consent-records.js';

/** The longest logo kept, in characters of its data URI (64 KiB of image, base64). */
export const MAX_LOGO_CHARS = Math.ceil((64 * 1024) / 3) * 4 + 64;

const COLOR = z
  .string()
  .regex(/^#[0-9a-fA-F]{6}$/, 'A colour is #rrggbb')
  .nullable()
  .optional();
const LOGO = z
  .string()
  .max(MAX_LOGO_CHARS, 'A logo is at most 64 KiB')
  .regex(
    /^data:image\/(png|jpeg|gif|webp|svg\+xml);base64,[A-Za-z0-9+/]+={0,2}$/,
    'A logo is a data:image/(png|jpeg|gif|webp|svg+xml);base64 URI: the pages load nothing from another host',
  )
  .nullable()
  .optional();
const PATCH_SCHEMA = z.strictObject({ color: COLOR, logo: LOGO });

/** How a project looks on the pages its contacts see (the preference centre, confirmation pages). */
export interface ProjectBrandView {
  /** The project's name (shown on the pages; set when the project is made). */
  name: string;
  /** `#rrggbb`, or null for the pages' default. */
  color: string | null;
  /** A `data:image/...;base64,` URI (at most 64 KiB), or null. */
  logo: string | null;
}

/** The fields of a brand to change; absent ones are kept, `null` clears. */
export interface ProjectBrandPatch {
  color?: string | null;
  logo?: string | null;
}

/** `mailroom.brand`: the project's colour and logo on its contact-facing pages. */
export interface MailroomBrand {
  get(auth: string | AuthContext): Promise<ProjectBrandView>;
  /** `VALIDATION_FAILED` for a colour that is not `#rrggbb` or a logo that is not a small image data URI. */
  update(auth: string | AuthContext, patch: ProjectBrandPatch): Promise<ProjectBrandView>;
}

/** `mailroom.brand`, scoped to the caller's project. */
export function createBrandApi(ctx: BaseContext, resolveAuth: ResolveAuth): MailroomBrand {
  const { store, clock } = ctx;
  const view = (name: string, b: ProjectBrandRecord | undefined): ProjectBrandView => ({
    name,
    color: b?.color ?? null,
    logo: b?.logo ?? null,
  });
  return {
    async get(auth) {
      const { project } = await resolveAuth(auth);
      return view(project.name, await store.getProjectBrand(project.id));
    },
    async update(auth, patch) {
      const { project } = await resolveAuth(auth);
      const parsed = PATCH_SCHEMA.safeParse(patch);
      if (!parsed.success) {
        throw new MailroomError('VALIDATION_FAILED', 'Invalid brand', {
          issues: toValidationIssues(parsed.error.issues),
        });
      }
      const current = await store.getProjectBrand(project.id);
      const brand: ProjectBrandRecord = {
        projectId: project.id,
        color: parsed.data.color !== undefined ? parsed.data.color : (current?.color ?? null),
        logo: parsed.data.logo !== undefined ? parsed.data.logo : (current?.logo ?? null),
        updatedAt: clock.now(),
      };
      await store.putProjectBrand(brand);
      return view(project.name, brand);
    },
  };
}
