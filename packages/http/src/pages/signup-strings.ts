/**
 * The words of the signup and confirmation pages (issue 38), English: the default and, for now, the only
 * language. Each value is plain text (escaped where placed); the page fills its `{name}` slots.
 */
export const SIGNUP_STRINGS_EN = {
  lang: 'en',
  thanksTitle: 'Thank you',
  thanksText:
    'If this address can receive our mail, you will get it. Where a confirmation is needed, look for a message with a link in your inbox.',
  confirmTitle: 'Confirm your subscription',
  confirmText: 'Confirm that {address} wants to receive {what} from {project}.',
  confirmButton: 'Confirm my subscription',
  confirmedTitle: 'Subscription confirmed',
  confirmedText: '{address} will receive {what} from {project}.',
  expiredTitle: 'This link has expired',
  expiredText: 'Confirmation links work for a limited time. Ask for a new one and use it soon.',
  resendButton: 'Send a new link',
  resentTitle: 'Check your inbox',
  resentText: 'A new confirmation link is on its way to {address} (at most one every few minutes).',
  invalidTitle: 'Confirmation',
  invalidText: 'This confirmation link is not valid.',
  theirMail: 'their mail',
} as const;

/** The words of one language. */
export type SignupStrings = { readonly [K in keyof typeof SIGNUP_STRINGS_EN]: string };
