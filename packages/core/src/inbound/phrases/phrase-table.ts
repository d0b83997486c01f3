/**
 * Phrase tables as data: the wordings servers use, kept as lists of plain phrases (plus a few patterns
 * where a phrase cannot say it), compiled once, at load, into one case-insensitive regular expression per
 * family. The classifier runs on every refusal at thousands of messages a second, so nothing is built per
 * call.
 */

/** One family of wordings: plain phrases, and patterns for what a plain phrase cannot say. */
export interface PhraseFamily {
  /**
   * Phrases matched anywhere in the text, ignoring case: a space matches any run of white space (replies
   * wrap over lines), an apostrophe either apostrophe, and an accented letter itself or its bare letter
   * (servers that write French or Spanish in ASCII).
   */
  readonly phrases: readonly string[];
  /** Patterns (their source is used, their flags are not: the table is matched ignoring case). */
  readonly patterns?: readonly RegExp[];
}

/** Accented letters and the bare letter some servers write instead. */
const FOLD: Record<string, string> = {
  à: 'a',
  á: 'a',
  â: 'a',
  ä: 'a',
  ã: 'a',
  å: 'a',
  ą: 'a',
  ç: 'c',
  ć: 'c',
  č: 'c',
  é: 'e',
  è: 'e',
  ê: 'e',
  ë: 'e',
  ę: 'e',
  ě: 'e',
  í: 'i',
  ì: 'i',
  î: 'i',
  ï: 'i',
  ı: 'i',
  ñ: 'n',
  ń: 'n',
  ň: 'n',
  ó: 'o',
  ò: 'o',
  ô: 'o',
  ö: 'o',
  õ: 'o',
  ő: 'o',
  ř: 'r',
  ś: 's',
  š: 's',
  ş: 's',
  ú: 'u',
  ù: 'u',
  û: 'u',
  ü: 'u',
  ű: 'u',
  ů: 'u',
  ý: 'y',
  ÿ: 'y',
  ź: 'z',
  ż: 'z',
  ž: 'z',
  ł: 'l',
  ğ: 'g',
};

/** The source of a pattern matching `phrase` as {@link PhraseFamily.phrases} describes. */
export function phraseSource(phrase: string): string {
  let out = '';
  let space = false;
  for (const ch of phrase.toLowerCase()) {
    if (/\s/.test(ch)) {
      if (!space) out += '\\s+';
      space = true;
      continue;
    }
    space = false;
    const bare = FOLD[ch];
    if (bare) out += `[${ch}${bare}]`;
    else if (ch === "'" || ch === '’') out += "['’]";
    else out += ch.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
  }
  return out;
}

/** One regular expression (ignoring case) that matches when any phrase or pattern of `families` does. */
export function compilePhrases(...families: PhraseFamily[]): RegExp {
  const sources: string[] = [];
  for (const family of families) {
    for (const phrase of family.phrases) sources.push(phraseSource(phrase));
    for (const pattern of family.patterns ?? []) sources.push(pattern.source);
  }
  return new RegExp(sources.map((s) => `(?:${s})`).join('|'), 'i');
}
