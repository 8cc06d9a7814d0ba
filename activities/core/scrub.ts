/** A person taken out of free text, for an erasure's tombstoning (docs/privacy.md). */
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Any of these strings as a whole token (not inside a longer id), longest first; null when there is none. */
export function wholeTokens(strings: string[]): RegExp | null {
  const list = [...new Set(strings.filter((x) => x && x.length))].sort((a, b) => b.length - a.length);
  return list.length ? new RegExp(`(?<![A-Za-z0-9_-])(?:${list.map(escape).join('|')})(?![A-Za-z0-9_-])`, 'g') : null;
}

/** A phone-like number (a provider's refusal reason may quote the number it refused). */
export const PHONE_LIKE = /(?<![A-Za-z0-9_-])\+?\d[\d ().-]{6,}\d(?![A-Za-z0-9_-])/g;

/** Replaces these strings (whole tokens) in a text with the tombstone; `phones`, any phone-like number too. */
export function scrubber(strings: string[], tombstone: string, phones = false): (s: string) => string {
  const named = wholeTokens(strings);
  return (s) => {
    const out = named ? s.replace(named, tombstone) : s;
    return phones ? out.replace(PHONE_LIKE, tombstone) : out;
  };
}
