/**
 * Free-text search terms (`q`, `search[name]`, `name`, …) match literally, and only ASCII letters fold case, as
 * SQLite's LIKE and lower() fold them (D1 has no ICU). Filters done in code fold the same way as those done in SQL.
 */

/** ASCII-only lower case, as SQLite's lower() (String#toLowerCase would also fold e.g. the Kelvin sign to `k`). */
export function foldAscii(s: string): string {
  return s.replace(/[A-Z]+/g, (m) => m.toLowerCase());
}

/** In-code substring test, the same as SQL's `instr(lower(haystack), lower(needle)) > 0`. */
export function containsText(haystack: string, needle: string): boolean {
  return foldAscii(haystack).includes(foldAscii(needle));
}
