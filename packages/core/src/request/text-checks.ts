/**
 * Small text predicates shared by the request validators. Each is a single linear pass (no regex with
 * nested quantifiers), so a hostile multi-megabyte string costs time proportional to its length only.
 */

/**
 * True when `text` holds a character that could end or split a header line: CR, LF, NUL, NEL
 * (U+0085), or the Unicode line and paragraph separators (U+2028, U+2029).
 */
export function hasLineBreak(text: string): boolean {
  return LINE_BREAK.test(text);
}

/** Removes leading and trailing spaces and tabs only: a CR or LF at an edge must still be seen and refused. */
export function trimBlanks(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && isBlank(text.charCodeAt(start))) start++;
  while (end > start && isBlank(text.charCodeAt(end - 1))) end--;
  return start === 0 && end === text.length ? text : text.slice(start, end);
}

/** True when `text` is empty or only whitespace. */
export function isBlankText(text: string): boolean {
  return text.trim().length === 0;
}

// A character class with no quantifier: the engine visits each character once.
const LINE_BREAK = /[\r\n\0\u0085\u2028\u2029]/;

function isBlank(code: number): boolean {
  return code === 0x20 || code === 0x09;
}
