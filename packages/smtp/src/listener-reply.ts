import type { SMTPServerSession } from 'smtp-server';

/** An error the SMTP server answers with `code` and `message` (smtp-server reads `responseCode`). */
export function smtpReply(code: number, message: string): Error & { responseCode: number } {
  return Object.assign(new Error(message), { responseCode: code });
}

/** The client's IP address, or `unknown`: the key of the per-IP limits. */
export function ipOf(session: SMTPServerSession): string {
  return session.remoteAddress ?? 'unknown';
}
