import { codePointLength, isInvisible } from "../../platform/text.js";

/**
 * Page paths: stable, user-scoped names such as `projects/acme/pricing-notes`.
 *
 * Normalisation: `/` and `\` both separate segments; leading, trailing and repeated
 * separators, empty segments, segments of invisible characters only (zero-width spaces,
 * bidirectional controls, …: they would look empty) and `.` segments are dropped; each
 * segment is trimmed and NFC-normalised; case is kept. A `..` segment or a control
 * character is refused rather than resolved, so a path never means something other than
 * what was sent. Lengths count code points.
 */
export const PATH_MAX_INPUT = 1000;
export const PATH_MAX_LENGTH = 512;
export const PATH_MAX_SEGMENT = 200;
export const PATH_MAX_DEPTH = 32;
export const SLUG_MAX_LENGTH = 120;

export type PathResult = { ok: true; path: string } | { ok: false; message: string };

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this refuses
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/u;

export function normalisePath(raw: string): PathResult {
  if (CONTROL.test(raw)) return { ok: false, message: "Path must not contain control characters" };
  const segments: string[] = [];
  for (const part of raw.normalize("NFC").split(/[/\\]/u)) {
    const segment = part.trim();
    if (isInvisible(segment) || segment === ".") continue;
    if (segment === "..") return { ok: false, message: "Path must not contain '..' segments" };
    if (codePointLength(segment) > PATH_MAX_SEGMENT) {
      return { ok: false, message: `Path segments should have at most ${PATH_MAX_SEGMENT} characters` };
    }
    segments.push(segment);
  }
  if (segments.length === 0) return { ok: false, message: "Path must contain at least one segment" };
  if (segments.length > PATH_MAX_DEPTH) return { ok: false, message: `Path should have at most ${PATH_MAX_DEPTH} segments` };
  const path = segments.join("/");
  if (codePointLength(path) > PATH_MAX_LENGTH) {
    return { ok: false, message: `Path should have at most ${PATH_MAX_LENGTH} characters once normalised` };
  }
  return { ok: true, path };
}

/**
 * The path of a page saved without one: a slug of its title (lower case, letters and
 * digits of any script, runs of anything else as one `-`, accents dropped), at most
 * 120 characters; `untitled` when nothing is left. The same title gives the same path,
 * so saving again under the same title replaces the page.
 */
export function slugFromTitle(title: string): string {
  const slug = title
    .normalize("NFKD")
    .replace(/\p{M}+/gu, "")
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, "-")
    .replace(/^-+|-+$/g, "");
  const cut = Array.from(slug).slice(0, SLUG_MAX_LENGTH).join("").replace(/-+$/g, "");
  return cut === "" ? "untitled" : cut.normalize("NFC");
}
