/**
 * Fields stored as JSON text (`*_json` strings): free-form values whose keys are data (user-chosen
 * names, provider settings), kept as one string so neither server interprets, indexes or rejects
 * their keys (dots and `$` are legal in them). One codec per field reads and writes them; a value
 * that does not parse reads as the field's fallback instead of failing the whole request.
 */
export interface JsonText<T> {
  /** the text to store */
  encode(value: T): string;
  /** the stored text's value; the fallback when the text is missing or not valid JSON */
  decode(text: string | null | undefined): T;
}

export function jsonText<T>(fallback: T | (() => T)): JsonText<T> {
  const orElse = (): T => (typeof fallback === 'function' ? (fallback as () => T)() : fallback);
  return {
    encode: (value) => JSON.stringify(value ?? null),
    decode: (text) => {
      if (text === null || text === undefined || text === '') return orElse();
      try {
        return JSON.parse(text) as T;
      } catch {
        return orElse();
      }
    },
  };
}

/** One-off reading of a JSON text field: `fallback` when missing or unparsable. */
export const parseJsonText = <T>(text: string | null | undefined, fallback: T): T => jsonText<T>(fallback).decode(text);
