/**
 * Control characters (C0, DEL, C1) and the Unicode line and paragraph separators: none belongs in a header
 * value, and CR or LF there would let data inject headers.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point.
const CONTROL_RUNS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g;

/**
 * Makes a rendered value safe for a header or a one-line preview: every run of control characters
 * (CR, LF, TAB, NUL, ...) becomes one space, and the ends are trimmed.
 *
 * @example singleLine('Hello\r\nBcc: x@y.test') // 'Hello Bcc: x@y.test'
 */
export function singleLine(value: string): string {
  return value.replace(CONTROL_RUNS, ' ').trim();
}
