import { annotate, classifyLine, isHintSentence, type LineSlot, mayHoldHint, resolveContext } from "./lines.js";
import { normaliseHeading, type SectionRole, sectionRole } from "./sections.js";

/**
 * What a stretch of an original is. `prose` is the author's own writing; `markup` is syntax
 * and leftovers that are neither prose nor content of another kind (list markers, link
 * brackets, thematic breaks, punctuation stranded between two cut-outs).
 */
export const BLOCK_KINDS = [
  "prose",
  "code",
  "inline_code",
  "html_comment",
  "html",
  "heading",
  "template_hint",
  "quote",
  "table",
  "stack_trace",
  "log",
  "env_dump",
  "url",
  "checklist",
  "markup",
] as const;
export type BlockKind = (typeof BLOCK_KINDS)[number];

const CODE = Object.fromEntries(BLOCK_KINDS.map((k, i) => [k, i + 1])) as Record<BlockKind, number>;
export const PROSE = CODE.prose;
export const MARKUP = CODE.markup;
export const kindOf = (code: number): BlockKind => BLOCK_KINDS[code - 1]!;

export interface Cut {
  start: number;
  end: number;
  kind: BlockKind;
}

const BULLET = /^(?:[-*+•·‣◦▪]|\d{1,3}[.)])\s+/;
/** A transcript's time code opening a line ("[00:01:23] ", "12:05 "). */
const TIME_CODE = /^[[(]?\d{1,2}:\d{2}(?::\d{2})?[\])]?\s+/;
const SENTENCE_END = /[.!?]+["')\]’”]*\s+/g;

/**
 * One character array of kinds over the text, painted block by block (later paint wins),
 * plus the section changes and the prose blocks met on the way, all in document order.
 */
export class Canvas {
  readonly paint: Uint8Array;
  /** Section changes: from `at` on, the section is `section`. */
  readonly sections: { at: number; section: string | null }[] = [];
  /** Each stretch handed to `prose` (a paragraph, a list item's text, a plain-text block). */
  readonly blocks: { start: number; end: number }[] = [];
  /** Sections open when a `<details>` began, restored when it ends. */
  readonly detailsSections: (string | null)[] = [];
  section: string | null = null;
  role: SectionRole = "other";

  constructor(
    readonly text: string,
    readonly markdown: boolean,
  ) {
    this.paint = new Uint8Array(text.length);
  }

  fill(start: number, end: number, kind: BlockKind): void {
    if (end > start) this.paint.fill(CODE[kind], Math.max(0, start), Math.min(end, this.paint.length));
  }

  setSection(at: number, section: string | null): void {
    this.section = section;
    this.role = sectionRole(section);
    const last = this.sections[this.sections.length - 1];
    if (last && last.at >= at) last.section = section;
    else this.sections.push({ at, section });
  }

  /**
   * A stretch the parser calls text (a paragraph, a list item's text, plain text between
   * blank lines): painted prose, then its inline cut-outs, then whole lines that the line
   * heuristics take for something else, and template prompts sentence by sentence.
   */
  prose(from: number, to: number, cuts: Cut[]): void {
    const { text } = this;
    if (to <= from) return;
    this.blocks.push({ start: from, end: to });
    this.fill(from, to, "prose");
    for (const cut of cuts) this.fill(cut.start, cut.end, cut.kind);
    // A comment opener the parser left as text (unclosed, or inside a line it did not parse) still hides what follows.
    for (let i = text.indexOf("<!--", from); i !== -1 && i < to; i = text.indexOf("<!--", i + 4)) {
      const close = text.indexOf("-->", i + 4);
      const end = close === -1 || close + 3 > to ? to : close + 3;
      this.fill(i, end, "html_comment");
      if (end >= to) break;
    }
    // Stray fence markers (an unmatched ``` mid-line) are never prose either.
    for (const fence of ["```", "~~~"]) {
      for (let i = text.indexOf(fence, from); i !== -1 && i < to; i = text.indexOf(fence, i + 3)) {
        let end = i + 3;
        while (end < to && text.charCodeAt(end) === fence.charCodeAt(0)) end++;
        this.fill(i, end, "markup");
      }
    }

    const physicalStart = from === 0 ? 0 : text.lastIndexOf("\n", from - 1) + 1;
    const slots: (LineSlot & { start: number; end: number })[] = [];
    let ls = from;
    for (;;) {
      let le = text.indexOf("\n", ls);
      if (le === -1 || le > to) le = to;
      let end = le;
      if (end > ls && text.charCodeAt(end - 1) === 13) end--;
      let start = ls;
      while (start < end && isBlank(text.charCodeAt(start))) start++;
      const blank = start >= end;
      const line = text.slice(start, end);
      const verdict = blank ? { kind: "prose" as const } : annotate(line, classifyLine(line, this.role, this.markdown));
      if (verdict.heading) this.setSection(start, normaliseHeading(verdict.heading));
      const colon = !blank && text.charCodeAt(end - 1) === 58;
      slots.push({ verdict, indent: start - (ls === from ? physicalStart : ls), blank, colon, start, end, line });
      if (le >= to) break;
      ls = le + 1;
    }
    resolveContext(slots);

    for (const slot of slots) {
      const { verdict, start, end } = slot;
      if (slot.blank) continue;
      if (verdict.kind !== "prose") {
        this.fill(start, end, verdict.kind);
        continue;
      }
      let from = start;
      if (verdict.labelLength) {
        this.fill(start, start + verdict.labelLength, "heading");
        from = start + verdict.labelLength;
      }
      for (const re of [BULLET, TIME_CODE]) {
        const prefix = re.exec(text.slice(from, Math.min(end, from + 120)));
        if (!prefix) continue;
        this.fill(from, from + prefix[0].length, "markup");
        from += prefix[0].length;
      }
      this.hints(from, end);
    }
  }

  /** Paints the template prompts among the sentences of one prose line. */
  private hints(from: number, to: number): void {
    const lower = this.text.slice(from, to).toLowerCase();
    if (!mayHoldHint(lower)) return;
    let start = 0;
    SENTENCE_END.lastIndex = 0;
    for (;;) {
      const m = SENTENCE_END.exec(lower);
      const end = m ? m.index + m[0].length : lower.length;
      const sentence = lower.slice(start, end).trim();
      if (sentence && isHintSentence(sentence, this.markdown)) {
        const lead = lower.slice(start, end).search(/\S/);
        this.fill(from + start + lead, from + start + lead + sentence.length, "template_hint");
      }
      if (!m) break;
      start = end;
    }
  }
}

const URL_TEXT = /\b(?:https?:\/\/|www\.)[^\s<>"'`]+|\b[\w.+-]{1,64}@[\w-]{1,63}(?:\.[\w-]{1,63})+/g;
const BACKTICKS = /`[^`\n]+`/g;
const TRAILING_PUNCTUATION = /[.,;:!?)\]}'"]+$/;

/** Bare URLs and e-mail addresses in a stretch of text (and `backticked` code, for plain text). */
export function textCuts(text: string, from: number, to: number, backticks: boolean): Cut[] {
  const slice = text.slice(from, to);
  const cuts: Cut[] = [];
  if (slice.includes("://") || slice.includes("www.") || slice.includes("@")) {
    URL_TEXT.lastIndex = 0;
    for (let m = URL_TEXT.exec(slice); m; m = URL_TEXT.exec(slice)) {
      const url = m[0].replace(TRAILING_PUNCTUATION, "");
      if (url.includes("@") && !url.includes("/") && !/\.[a-z]{2,}$/i.test(url)) continue;
      cuts.push({ start: from + m.index, end: from + m.index + url.length, kind: "url" });
    }
  }
  if (backticks && slice.includes("`")) {
    BACKTICKS.lastIndex = 0;
    for (let m = BACKTICKS.exec(slice); m; m = BACKTICKS.exec(slice)) {
      cuts.push({ start: from + m.index, end: from + m.index + m[0].length, kind: "inline_code" });
    }
  }
  return cuts;
}

/** Whether a UTF-16 code unit is whitespace (the characters of `\s`). */
export const isBlank = (c: number) =>
  c <= 32
    ? c === 32 || (c >= 9 && c <= 13)
    : c === 0xa0 ||
      c === 0x1680 ||
      (c >= 0x2000 && c <= 0x200a) ||
      c === 0x2028 ||
      c === 0x2029 ||
      c === 0x202f ||
      c === 0x205f ||
      c === 0x3000 ||
      c === 0xfeff;
