import type { FormRecord } from '../store/signup-records.js';

/** The variables every confirmation message gets (the built-in one and a project's template). */
export interface ConfirmationVariables {
  confirm_url: string;
  project_name: string;
  form_name: string;
  consent_text: string;
  valid_days: number;
}

/** The subject of the built-in confirmation message. */
export const DEFAULT_CONFIRM_SUBJECT = 'Please confirm your subscription';

/**
 * The built-in confirmation message: Liquid on the HTML engine, so every value is escaped where it is
 * written (project and form names and the consent text are the project's text).
 */
export const DEFAULT_CONFIRM_MESSAGE = [
  '<p>Please confirm that you want to receive mail from <strong>{{ project_name }}</strong>.</p>',
  '<p>What you agreed to: {{ consent_text }}</p>',
  '<p><a href="{{ confirm_url }}">Confirm my subscription</a></p>',
  '<p>If you did not sign up, ignore this message: nothing more will be sent to you.',
  ' The link works for {{ valid_days }} days.</p>',
].join('');

/**
 * The send request of one confirmation message (what `mailroom.send` takes): the form's template when it
 * names one, else the built-in message; the link and names as the recipient's variables.
 */
export function confirmationRequest(
  form: FormRecord,
  address: string,
  variables: ConfirmationVariables,
): Record<string, unknown> {
  const recipients = [{ address, variables: { ...variables } }];
  if (form.confirmTemplateRef !== null) {
    return { sender: form.sender, template: { ref: form.confirmTemplateRef }, recipients };
  }
  return {
    subject: DEFAULT_CONFIRM_SUBJECT,
    sender: form.sender,
    message: DEFAULT_CONFIRM_MESSAGE,
    recipients,
  };
}
