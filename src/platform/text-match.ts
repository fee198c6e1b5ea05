/**
 * Free-text search terms (`q`, `search[name]`, `search[wildcard-name]`, `name`, …) match literally: every character
 * is itself (`%`, `_`, `\`, `*` and quotes included), at any length a route accepts, and only ASCII letters fold case,
 * as SQLite's LIKE and lower() fold them (D1 has no ICU). Filters done in code fold the same way as those done in SQL.
 */

export type TextMatchMode = "contains" | "prefix" | "suffix" | "exact";

/**
 * D1 refuses a LIKE or GLOB pattern longer than this many bytes (SQLITE_LIMIT_LIKE_PATTERN_LENGTH) with
 * "LIKE or GLOB pattern too complex", while routes accept terms of 255 characters and more.
 */
export const LIKE_PATTERN_MAX_BYTES = 50;

const utf8 = new TextEncoder();

/** LIKE-escapes a literal for `ESCAPE '\'`: every character matches itself, `%`, `_` and `\` included. */
export function likeLiteral(s: string): string {
  return s.replace(/[\\%_]/g, (m) => `\\${m}`);
}

const bytes = (s: string) => utf8.encode(s).length;

/** The LIKE pattern of `literal` by `mode`. */
function likePattern(literal: string, mode: TextMatchMode): string {
  const lead = mode === "contains" || mode === "suffix" ? "%" : "";
  const trail = mode === "contains" || mode === "prefix" ? "%" : "";
  return `${lead}${likeLiteral(literal)}${trail}`;
}

/**
 * A LIKE pattern within D1's limit that every match of a longer literal also matches: its first characters (its last
 * for `suffix`) as a prefix, suffix or substring.
 */
function coarsePattern(literal: string, mode: TextMatchMode): string {
  const chars = [...literal];
  if (mode === "suffix") chars.reverse();
  let budget = LIKE_PATTERN_MAX_BYTES - (mode === "contains" ? 2 : 1);
  const kept: string[] = [];
  for (const ch of chars) {
    const escaped = likeLiteral(ch);
    budget -= bytes(escaped);
    if (budget < 0) break;
    kept.push(escaped);
  }
  if (mode === "suffix") return `%${kept.reverse().join("")}`;
  return `${mode === "contains" ? "%" : ""}${kept.join("")}%`;
}

/**
 * A condition true when `column` matches `literal` by `mode`, case-insensitively for ASCII. A pattern that fits D1's
 * limit stays one LIKE: per row it costs about half of lower() + instr(), and a prefix LIKE on a NOCASE column can
 * seek an index (the workspace list's name index). A longer literal is tested with lower(), instr() and substr(),
 * which compare whole values at any length, behind a LIKE on the part of it that fits, so the same index range and
 * most of the cheap rejections remain. A literal with NUL (where LIKE stops reading a pattern) takes the exact test
 * alone. `bind` adds a value and returns its placeholder; it is called in the order the placeholders appear.
 */
export function textMatchSql(column: string, literal: string, mode: TextMatchMode, bind: (value: string) => string): string {
  const hasNul = literal.includes("\u0000");
  const pattern = likePattern(literal, mode);
  if (!hasNul && bytes(pattern) <= LIKE_PATTERN_MAX_BYTES) return `${column} LIKE ${bind(pattern)} ESCAPE '\\'`;
  const coarse = hasNul ? "" : `${column} LIKE ${bind(coarsePattern(literal, mode))} ESCAPE '\\' AND `;
  switch (mode) {
    case "contains":
      return `(${coarse}instr(lower(${column}), lower(${bind(literal)})) > 0)`;
    case "prefix":
      return `(${coarse}instr(lower(${column}), lower(${bind(literal)})) = 1)`;
    case "suffix":
      // substr() and length() count characters alike; a literal longer than the value takes all of it, which differs.
      return `(${coarse}lower(substr(${column}, -length(${bind(literal)}))) = lower(${bind(literal)}))`;
    case "exact":
      return `(${coarse}lower(${column}) = lower(${bind(literal)}))`;
  }
}

/** A `bind` for textMatchSql that appends to a statement's positional (`?`) values. */
export function appendTo(binds: unknown[]): (value: string) => string {
  return (value) => {
    binds.push(value);
    return "?";
  };
}

/** ASCII-only lower case, as SQLite's lower() (String#toLowerCase would also fold e.g. the Kelvin sign to `k`). */
export function foldAscii(s: string): string {
  return s.replace(/[A-Z]+/g, (m) => m.toLowerCase());
}

/** In-code substring test, the same as SQL's `instr(lower(haystack), lower(needle)) > 0`. */
export function containsText(haystack: string, needle: string): boolean {
  return foldAscii(haystack).includes(foldAscii(needle));
}
