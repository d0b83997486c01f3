import { MailroomError } from '@mailroom/core';

/** Options of the project dashboard served by the HTTP layer. */
export interface DashboardOptions {
  /**
   * Serve the dashboard. It shows a project's data only to someone who signs in with that project's secret.
   * @default true
   */
  enabled?: boolean;
  /**
   * Where the dashboard lives, relative to the mount point of the HTTP layer.
   * @default '/dashboard'
   * @example '/admin/mail'
   */
  prefix?: string;
  /**
   * How long a sign-in lasts, in milliseconds, whatever the activity.
   * @default 43_200_000 (12 hours)
   */
  sessionTtlMs?: number;
  /**
   * Give the session cookie the `Secure` attribute (sent over HTTPS only). `'auto'` sets it when the
   * request says it came over HTTPS (`X-Forwarded-Proto: https` from a TLS-terminating proxy).
   * @default 'auto'
   */
  secureCookie?: boolean | 'auto';
  /**
   * Sessions kept at once (they live in this process's memory); past it the oldest is signed out.
   * @default 10_000
   */
  maxSessions?: number;
}

/** {@link DashboardOptions} with defaults applied. */
export interface ResolvedDashboardOptions {
  prefix: string;
  sessionTtlMs: number;
  secureCookie: boolean | 'auto';
  maxSessions: number;
}

/** The defaults of {@link DashboardOptions}. */
export const DASHBOARD_DEFAULTS: ResolvedDashboardOptions = {
  prefix: '/dashboard',
  sessionTtlMs: 12 * 60 * 60 * 1000,
  secureCookie: 'auto',
  maxSessions: 10_000,
};

/** The options with defaults, or `undefined` when the dashboard is off. Refuses a prefix it cannot serve. */
export function resolveDashboardOptions(
  options: DashboardOptions | undefined,
): ResolvedDashboardOptions | undefined {
  if (options?.enabled === false) return undefined;
  const prefix = (options?.prefix ?? DASHBOARD_DEFAULTS.prefix).replace(/\/+$/, '');
  if (!/^\/[A-Za-z0-9._~/-]+$/.test(prefix)) {
    throw new MailroomError(
      'VALIDATION_FAILED',
      `dashboard.prefix must be a path like /dashboard, got '${prefix}'`,
      {
        source: '@mailroom/http',
      },
    );
  }
  return {
    prefix,
    sessionTtlMs: options?.sessionTtlMs ?? DASHBOARD_DEFAULTS.sessionTtlMs,
    secureCookie: options?.secureCookie ?? DASHBOARD_DEFAULTS.secureCookie,
    maxSessions: options?.maxSessions ?? DASHBOARD_DEFAULTS.maxSessions,
  };
}
