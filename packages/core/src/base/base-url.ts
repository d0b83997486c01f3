import { MailroomError } from './errors.js';

/**
 * A public base URL of the engine's links (unsubscribe, tracking) without its trailing slash: an absolute
 * http(s) URL without query or fragment, else `VALIDATION_FAILED` naming `<option>.baseUrl`.
 */
export function publicBaseUrl(
  baseUrl: string,
  option: 'unsubscribe' | 'tracking' | 'signup' | 'receiving',
): string {
  const refuse = (message: string) =>
    new MailroomError('VALIDATION_FAILED', message, {
      issues: [{ code: 'custom', path: [option, 'baseUrl'], message }],
    });
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw refuse(`The ${option} baseUrl is not an absolute URL: ${baseUrl}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw refuse(`The ${option} baseUrl must be an http or https URL`);
  }
  if (url.search !== '' || url.hash !== '') {
    throw refuse(`The ${option} baseUrl takes no query string or fragment`);
  }
  return url.toString().replace(/\/+$/, '');
}
