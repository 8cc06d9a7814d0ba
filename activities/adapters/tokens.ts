/** Words of a text, lower-cased, as the local text analysis and the local embedding both count them. */
const WORD = /[\p{L}\p{N}][\p{L}\p{N}'’-]*/gu;

export const tokenize = (text: string): string[] =>
  (text.toLowerCase().match(WORD) ?? []).map((w) => w.replace(/’/g, "'"));
