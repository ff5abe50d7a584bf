import { type BlockKind, Canvas, isBlank, kindOf, MARKUP, PROSE } from "./structure/canvas.js";
import { paintMarkdown, TOO_DEEP } from "./structure/markdown.js";
import { paintPlain } from "./structure/plain.js";
import { type SectionRole, sectionRole } from "./structure/sections.js";

/**
 * Document structure of a stored original, read before opinion mining so that only what
 * the author wrote in their own words becomes opinion units. A GitHub issue is mostly not
 * that: code blocks, template prompts, headings, stack traces, logs and environment dumps
 * surround a few sentences of prose.
 *
 * Markdown is parsed by @lezer/markdown (CommonMark with GitHub's tables and task lists;
 * exact offsets on every node); plain text (reviews, transcripts) is not parsed as markdown,
 * though fences, "> " quotes and URLs are still honoured there. Both then go through the
 * same line heuristics inside paragraphs (structure/lines.ts): pasted stack traces, log
 * lines and unfenced code (structure/output.ts), version and environment dumps and the bare
 * values of a template's environment fields (structure/environment.ts), bold pseudo-headings
 * ("**To Reproduce**") and short labels ("Output:"), and template prompts left in place ("A
 * clear and concise description of what the bug is.").
 *
 * Offsets are UTF-16 indices into the text, like `String.prototype.slice`; opinions.ts
 * turns them into code points for storage (`codePointIndexer`).
 */
export type { BlockKind } from "./structure/canvas.js";
export type { SectionRole } from "./structure/sections.js";
export { sectionRole } from "./structure/sections.js";

export type Format = "markdown" | "plain";

export interface Region {
  /** UTF-16 offsets: `text.slice(start, end)` is the region; it never starts or ends with whitespace. */
  start: number;
  end: number;
  kind: BlockKind;
  /** The nearest heading before the region (or the region's own, for a heading), normalised lower-case; null before any. */
  section: string | null;
}

export interface ProseRange {
  start: number;
  end: number;
  section: string | null;
  sectionRole: SectionRole;
  /**
   * Index of the paragraph, list item or plain-text block the range comes from. Inline code,
   * a link's brackets and URL, or a comment inside a sentence cuts it into several ranges
   * sharing one `block`; a caller that wants whole sentences can segment each block's span.
   */
  block: number;
}

const MARKDOWN_SIGNALS =
  /^[ \t]{0,3}(?:```|~~~|#{1,6}[ \t]|>[ \t]|[-*+][ \t]+\S|\d{1,3}[.)][ \t]+\S|\|.*\|[ \t]*$)|<!--|\]\([^)\s]+\)|\*\*[^*\n]+\*\*|`[^`\n]+`|<\/?(?:details|summary|br|img|sub|sup|p|div|pre|code|table|h[1-6])\b/im;

/** "markdown" when the text shows markdown signals (fences, headings, lists, links, comments, bold, inline code), else "plain". */
export function guessFormat(text: string): Format {
  return MARKDOWN_SIGNALS.test(text) ? "markdown" : "plain";
}

const LETTER = /\p{L}/u;
const LEADING = ",.;:)]}";
const TRAILING = "([{";
const BB_QUOTE = /\[quote(?:=[^\]\n]*)?\][\s\S]*?(?:\[\/quote\]|$)/gi;

interface Piece extends Region {
  /** Index into the canvas's prose blocks, for prose; -1 otherwise. */
  block: number;
}

/**
 * The last text analysed and its pieces: enrichment reads a row's structure twice in a row (its
 * opinion units, then its feedback kind's features), so the second read reuses the first. Pieces are
 * never modified by their readers.
 */
let last: { text: string; format: Format; pieces: Piece[] } | undefined;

function analyse(text: string, format: Format): Piece[] {
  if (last && last.format === format && last.text === text) return last.pieces;
  const pieces = parse(text, format);
  last = { text, format, pieces };
  return pieces;
}

function parse(text: string, format: Format): Piece[] {
  const markdown = format === "markdown" && !TOO_DEEP.test(text);
  let canvas = new Canvas(text, markdown);
  try {
    if (markdown) paintMarkdown(canvas);
    else paintPlain(canvas);
  } catch {
    // The parser is not expected to throw; if it ever does, the text is read as plain text.
    canvas = new Canvas(text, false);
    paintPlain(canvas);
  }
  if (text.includes("[quote")) {
    // Forum quotes (BBCode, as Discourse stores them) are someone else's words.
    BB_QUOTE.lastIndex = 0;
    for (let m = BB_QUOTE.exec(text); m; m = BB_QUOTE.exec(text)) {
      if (m[0].length === 0) break;
      canvas.fill(m.index, m.index + m[0].length, "quote");
    }
  }
  return collect(canvas);
}

/** Run-length regions over the painted kinds; prose trimmed, prose without a letter demoted to markup. */
function collect(canvas: Canvas): Piece[] {
  const { text, paint, sections, blocks } = canvas;
  const pieces: Piece[] = [];
  let s = 0;
  let b = 0;
  const n = text.length;
  let i = 0;
  while (i < n) {
    let code = paint[i]!;
    if (code === 0) {
      if (isBlank(text.charCodeAt(i))) {
        i++;
        continue;
      }
      code = MARKUP;
    }
    let j = i + 1;
    while (j < n && (paint[j] === code || (code === MARKUP && paint[j] === 0 && !isBlank(text.charCodeAt(j))))) j++;
    let start = i;
    let end = j;
    i = j;
    while (start < end && isBlank(text.charCodeAt(start))) start++;
    while (end > start && isBlank(text.charCodeAt(end - 1))) end--;
    if (start >= end) continue;
    while (s < sections.length && sections[s]!.at <= start) s++;
    const section = s > 0 ? sections[s - 1]!.section : null;
    if (code !== PROSE) {
      pieces.push({ start, end, kind: kindOf(code), section, block: -1 });
      continue;
    }
    // Punctuation left at the edge of a cut (", generation is …" after inline code) is not prose.
    let from = start;
    let to = end;
    while (from < to && (LEADING.includes(text.charAt(from)) || isBlank(text.charCodeAt(from)))) from++;
    while (to > from && (TRAILING.includes(text.charAt(to - 1)) || isBlank(text.charCodeAt(to - 1)))) to--;
    if (!LETTER.test(text.slice(from, to))) {
      pieces.push({ start, end, kind: "markup", section, block: -1 });
      continue;
    }
    while (b + 1 < blocks.length && blocks[b + 1]!.start <= from) b++;
    let lead = from;
    while (lead > start && isBlank(text.charCodeAt(lead - 1))) lead--;
    if (lead > start) pieces.push({ start, end: lead, kind: "markup", section, block: -1 });
    pieces.push({ start: from, end: to, kind: "prose", section, block: b });
    let trail = to;
    while (trail < end && isBlank(text.charCodeAt(trail))) trail++;
    if (end > trail) pieces.push({ start: trail, end, kind: "markup", section, block: -1 });
  }
  return pieces;
}

/**
 * The structure of a text: regions in order, non-overlapping, each a run of one kind.
 * Every character that is not whitespace lies in exactly one region.
 */
export function documentStructure(text: string, format: Format = guessFormat(text)): Region[] {
  return analyse(text, format).map(({ start, end, kind, section }) => ({ start, end, kind, section }));
}

/**
 * The author's prose: maximal stretches of paragraph and list-item text with inline code,
 * URLs, images, inline HTML and comments cut out (a sentence with inline code in it becomes
 * two ranges of the same `block`). Each `text.slice(start, end)` is verbatim, trimmed, and
 * holds a letter. Emphasis marks (`**really**`) and escapes stay inside a range as written.
 */
export function proseRanges(text: string, format: Format = guessFormat(text)): ProseRange[] {
  const out: ProseRange[] = [];
  for (const { start, end, kind, section, block } of analyse(text, format)) {
    if (kind === "prose") out.push({ start, end, section, sectionRole: sectionRole(section), block });
  }
  return out;
}
