/**
 * The kind an issue tracker's own labels give an original. Maintainers triage their issues with labels
 * such as `bug`, `type: enhancement` or `kind/question`; when a stored original carries them
 * (`metadata.labels`: the GitHub collector stores them, and an ingest client may send them), they are a
 * person's reading of the issue and beat any guess from its text. Only labels that name a kind count:
 * `help wanted`, `good first issue`, areas and priorities say nothing about it. Labels naming two
 * different kinds (a bug also labelled enhancement) decide nothing, and the model reads the text.
 */
export type LabelKind = "bug_report" | "feature_request" | "question";

/** The most labels read from one original (GitHub allows 100 on an issue). */
export const MAX_LABELS = 100;
/** Longer label names are no kind label (GitHub's limit is 50 characters). */
const MAX_LABEL_CHARS = 64;

/**
 * Words a tracker puts before a kind (`type: bug`, `kind/bug`, `C-bug`, `T-feature`, `Issue-Bug`,
 * `category: question`): taken off the front, one at a time, before the rest is looked up.
 */
const NAMESPACES = new Set(["type", "kind", "category", "cat", "issue", "c", "t", "is", "status", "triage", "class", "label"]);

/** Normalised label names (lower case, words joined by one space) and the kind each names. */
const NAMED = new Map<string, LabelKind>([
  ...["bug", "bugs", "defect", "regression", "crash", "bug report", "confirmed bug", "bug confirmed", "broken"].map(
    (name) => [name, "bug_report"] as const,
  ),
  ...[
    "enhancement",
    "enhancements",
    "feature",
    "features",
    "feature request",
    "feature requests",
    "new feature",
    "improvement",
    "suggestion",
    "request",
    "idea",
  ].map((name) => [name, "feature_request"] as const),
  ...["question", "questions", "support", "usage", "usage question", "help", "questions and help", "how to", "q a"].map(
    (name) => [name, "question"] as const,
  ),
]);

/**
 * A label's name in the form NAMED keys it by: lower case, letters and digits, single spaces; emoji, GitHub's
 * emoji shortcodes (`:bug:`, `:sparkles:`) and punctuation dropped.
 */
function normalise(name: string): string {
  return name
    .toLowerCase()
    .replace(/:[a-z0-9_+-]+:/g, " ")
    .replace(/[^\p{L}\p{N}&]+/gu, " ")
    .replace(/&/g, " and ")
    .trim()
    .replace(/\s+/g, " ");
}

/** The kind one label names, if any. */
export function kindOfLabel(name: string): LabelKind | null {
  if (name.length > MAX_LABEL_CHARS) return null;
  let words = normalise(name).split(" ");
  for (;;) {
    const found = NAMED.get(words.join(" "));
    if (found) return found;
    if (words.length < 2 || !NAMESPACES.has(words[0]!)) return null;
    words = words.slice(1);
  }
}

/**
 * The label names stored with an original, as the GitHub API gives them (objects with a `name`) or as
 * plain strings; anything else is ignored.
 */
export function labelNames(value: unknown): string[] {
  if (!Array.isArray(value)) return [];
  const names: string[] = [];
  for (const item of value.slice(0, MAX_LABELS)) {
    const name =
      typeof item === "string" ? item : typeof item === "object" && item !== null ? (item as { name?: unknown }).name : undefined;
    if (typeof name === "string" && name.trim() !== "") names.push(name);
  }
  return names;
}

/** The one kind an original's labels name, or null when they name none or several. */
export function kindFromLabels(labels: readonly string[]): LabelKind | null {
  let kind: LabelKind | null = null;
  for (const label of labels) {
    const named = kindOfLabel(label);
    if (named === null || named === kind) continue;
    if (kind !== null) return null;
    kind = named;
  }
  return kind;
}
