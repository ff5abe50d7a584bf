import MarkdownIt from "markdown-it";
import {
  CODE_LINE,
  DUMP_KEY,
  ENV_HEADING,
  HEADING_LABEL,
  HINT_LINE,
  HINT_PHRASE,
  LOG_LINE,
  NAME_VERSION,
  OTHER_DUMP,
} from "./markup-rules.js";

/**
 * An independent judge of where an original's markup lies, for measuring how many opinion units fall
 * inside it. It shares no code with the engine's structure reader (src/insights/enrichment/structure)
 * and must not import from src/: markdown-it (a different parser than the engine's) finds fenced and
 * indented code and headings; expressions written for this judge alone (markup-rules.ts) find the rest.
 * Five kinds of markup, and nothing else, are judged:
 *
 * - heading: markdown headings, a bold line standing alone ("**To Reproduce**"), a template section
 *   name alone on a line ("Steps to reproduce:"), a short label ending in a colon ("Output:"), and the
 *   text of `<summary>` and `<h1>`–`<h6>`;
 * - code: fenced and indented code, `<pre>`, lines of a paragraph indented four columns past its first
 *   line, and lines that are code by their shape (a statement ending in ";" or "{", an assignment, a
 *   call standing alone, a keyword argument "name=name,", a line dense with brackets and operators);
 * - log: log and trace lines (timestamps, levels, compiler diagnostics, stack frames, a traceback's
 *   numbered source lines, shell prompts, tool output drawn with box characters, addresses);
 * - dump: version and environment dumps ("Name: version", "Python 3.11.7", `pkg==1.2`, uname output,
 *   an environment field's bare value under its template heading such as "xterm-kitty");
 * - hint: template hints (HTML comments, checkboxes, the usual template sentences and instructions to
 *   the reporter, "_No response_").
 *
 * Quotes and tables are not judged (a quote is words, someone else's; a table may hold anything). A unit
 * is inside markup when more than half of its non-space characters are.
 */
export type MarkupKind = "heading" | "code" | "log" | "dump" | "hint";
export const MARKUP_KINDS: readonly MarkupKind[] = ["heading", "code", "log", "dump", "hint"];
const CODE_OF: Record<MarkupKind, number> = { heading: 1, code: 2, log: 3, dump: 4, hint: 5 };

const md = new MarkdownIt({ html: true });

/** A line's content without blockquote markers and a list bullet, and where that content starts. */
const CONTAINER = /^(?:[ \t]*>[ \t]?)*[ \t]*(?:(?:[-*+]|\d{1,9}[.)])[ \t]+)?/;
const COMMENT = /<!--[\s\S]*?(?:-->|$)/g;
const HTML_HEADING = /<(summary|h[1-6])\b[^>]*>([\s\S]*?)<\/\1\s*>/gi;
const HTML_PRE = /<pre\b[^>]*>[\s\S]*?(?:<\/pre\s*>|$)/gi;
/** A person speaking ("I have no idea", "Thanks"): not a field's value. */
const SPOKEN = /\b(?:i|i'm|i've|me|my|we|you|thanks?|please|hope|idea|sure)\b/i;
const words = (s: string) => (s.match(/\S+/g) ?? []).length;
const columns = (s: string) => {
  let n = 0;
  for (const ch of s) n += ch === "\t" ? 4 : 1;
  return n;
};

/** Per UTF-16 code unit of the text: 0 for prose (or anything not judged), else the markup kind's code. */
export function markupMarks(text: string): Uint8Array {
  const marks = new Uint8Array(text.length);
  const lines: { start: number; end: number; raw: string }[] = [];
  for (let start = 0; start <= text.length; ) {
    let end = text.indexOf("\n", start);
    if (end === -1) end = text.length;
    const raw = text.slice(start, end).replace(/\r$/, "");
    lines.push({ start, end: start + raw.length, raw });
    start = end + 1;
  }
  const kind: (MarkupKind | null)[] = lines.map(() => null);
  const paragraphOf: number[] = lines.map(() => -1);
  const headingText: (string | null)[] = lines.map(() => null);
  /** Table rows: not judged. */
  const skipped: boolean[] = lines.map(() => false);
  const tokens = md.parse(text, {});
  for (let t = 0; t < tokens.length; t++) {
    const token = tokens[t]!;
    if (!token.map) continue;
    const [from, to] = token.map;
    if (token.type === "fence" || token.type === "code_block") for (let i = from; i < to; i++) kind[i] = "code";
    else if (token.type === "heading_open") {
      for (let i = from; i < to; i++) kind[i] = "heading";
      headingText[from] = tokens[t + 1]?.content ?? "";
    } else if (token.type === "paragraph_open") for (let i = from; i < to; i++) paragraphOf[i] = from;
    else if (token.type === "table_open") for (let i = from; i < to; i++) skipped[i] = true;
  }

  // Section context: the last heading seen (markdown, bold line or label) names the field a value fills.
  let section: string | null = null;
  let sinceHeading = 0;
  lines.forEach((line, i) => {
    const container = CONTAINER.exec(line.raw)![0];
    const body = line.raw.slice(container.length).trim();
    if (headingText[i] !== null) {
      section = headingText[i]!;
      sinceHeading = 0;
      return;
    }
    if (kind[i] || skipped[i] || body === "") return;
    // A paragraph's line indented four columns past the paragraph's first line is pasted output.
    const first = paragraphOf[i]!;
    if (first >= 0 && first < i) {
      const head = CONTAINER.exec(lines[first]!.raw)![0];
      const indent = columns(/^[ \t]*/.exec(line.raw)![0]);
      if (indent >= columns(head) + 4 && !/^[ \t]*(?:>|[-*+][ \t]|\d{1,9}[.)][ \t])/.test(line.raw)) {
        kind[i] = "code";
        return;
      }
    }
    const verdict = lineKind(body, line.raw);
    if (verdict) {
      kind[i] = verdict;
      if (verdict === "heading") {
        section = body;
        sinceHeading = 0;
      }
      return;
    }
    sinceHeading++;
    // A template's environment field holds its value alone under its heading ("$TERM" → "xterm-kitty").
    if (section && ENV_HEADING.test(section) && sinceHeading <= 3 && words(body) <= 6 && !/[.!?]$/.test(body) && !SPOKEN.test(body))
      kind[i] = "dump";
  });

  lines.forEach((line, i) => {
    if (kind[i]) marks.fill(CODE_OF[kind[i]!], line.start, line.end);
  });
  for (const m of text.matchAll(HTML_PRE)) marks.fill(CODE_OF.code, m.index, m.index + m[0].length);
  for (const m of text.matchAll(HTML_HEADING)) marks.fill(CODE_OF.heading, m.index, m.index + m[0].length);
  for (const m of text.matchAll(COMMENT)) marks.fill(CODE_OF.hint, m.index, m.index + m[0].length);
  markHintSentences(lines, kind, marks);
  return marks;
}

/** What one line's content (blockquote markers and bullet removed) is, or null for prose. */
function lineKind(body: string, raw: string): MarkupKind | null {
  if (HINT_LINE.test(body)) return "hint";
  if (LOG_LINE.some((r) => r.test(body)) || LOG_LINE.some((r) => r.test(raw))) return "log";
  if (isDump(body)) return "dump";
  if (CODE_LINE.some((r) => r.test(body))) return "code";
  if (isDense(body)) return "code";
  if (HEADING_LABEL.some((r) => r.test(body))) return "heading";
  return null;
}

function isDump(body: string): boolean {
  const line = body.replace(/\*\*|__|`/g, "").trim();
  if (OTHER_DUMP.some((r) => r.test(line))) return true;
  const nv = NAME_VERSION.exec(line);
  if (
    nv &&
    !/\b(?:to|in|on|at|after|before|since|from|with|of|is|was|are|were|the|a|an|and|or|but|i|we|it|still|also|using|use|used|than|while|when|during|upgrad\w*|updat\w*|instal\w*|tried|works?|broke|fixed)\b/i.test(
      nv[1]!,
    )
  )
    return true;
  const kv = /^([^:]{1,60}?)\s*:\s+(\S.*)$/.exec(line);
  if (!kv) return false;
  const key = kv[1]!;
  const value = kv[2]!.trim();
  if (words(key) > 6) return false;
  const n = words(value);
  // A value that opens with a version or a name and its version ("kitty 0.26", "v0.9.1", "Linux 5.15.0-…").
  if (/^(?:\S+\s+){0,2}v?\d+(?:\.\d+)+/.test(value) && n <= 12) return true;
  // A path, quoted or not.
  if (/^"?(?:[A-Za-z]:\\|[~/$])[^\s"]*"?$/.test(value)) return true;
  return DUMP_KEY.test(key) && n <= 6 && !/\b(?:the|a|an|my|our|with|when|if|i|it|is|this|that)\b/i.test(key);
}

/** A line dense with brackets and operators: more than one such character per six letters, and at least five. */
function isDense(line: string): boolean {
  // Inline code and emphasis marks inside a sentence are not what makes a line code.
  const body = line.replace(/`[^`]*`/g, " ").replace(/\*\*|__/g, "");
  const symbols = body.match(/[{}[\]()<>;=|&*^$\\]|::|->|=>/g)?.length ?? 0;
  if (symbols < 5) return false;
  const letters = body.match(/\p{L}/gu)?.length ?? 0;
  return symbols * 6 > letters;
}

/** Template sentences inside longer prose lines ("Please provide a minimal reproduction."), sentence by sentence. */
function markHintSentences(lines: { start: number; end: number; raw: string }[], kind: (MarkupKind | null)[], marks: Uint8Array) {
  lines.forEach((line, i) => {
    if (kind[i]) return;
    for (const m of line.raw.matchAll(/[^.!?]+(?:[.!?]+|$)/g)) {
      const sentence = m[0].trim();
      if (sentence && HINT_PHRASE.test(sentence)) {
        const at = line.start + m.index + m[0].indexOf(sentence);
        marks.fill(CODE_OF.hint, at, at + sentence.length);
      }
    }
  });
}

/** A judge for one text: the markup kind the UTF-16 span [start, end) mostly lies in, or null. */
export function markupJudge(text: string): (start: number, end: number) => MarkupKind | null {
  const marks = markupMarks(text);
  return (start, end) => {
    const count = [0, 0, 0, 0, 0, 0];
    let counted = 0;
    for (let i = start; i < end; i++) {
      if (/\s/.test(text.charAt(i))) continue;
      counted++;
      count[marks[i]!]!++;
    }
    if (counted === 0 || count[0]! * 2 >= counted) return null;
    let best = 1;
    for (let k = 2; k <= 5; k++) if (count[k]! > count[best]!) best = k;
    return MARKUP_KINDS[best - 1]!;
  };
}
