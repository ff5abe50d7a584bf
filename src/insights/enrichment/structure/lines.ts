import { isEnvKey, isEnvLine, isEnvValue, isFieldLine } from "./environment.js";
import {
  BARE_EXCEPTION,
  CODE,
  CODE_END,
  DIAGNOSTIC,
  EXCEPTION,
  FENCE,
  FRAME,
  isDense,
  isLogAnywhere,
  LEVEL,
  LOG,
  TECHNICAL,
  TRACE_CONTINUATION,
  TRACE_TAIL,
} from "./output.js";
import { HEADING_START, normaliseHeading, type SectionRole, sectionRole } from "./sections.js";

/**
 * Line heuristics: what a single line of a paragraph (or of plain text) is when it is not
 * the author's prose. Pasted output keeps its shape even where no code fence marks it: a
 * traceback's frames, a log line's timestamp or level, an environment dump's
 * `key: version` pairs. Each test is an anchored expression on one line, so a line costs a
 * few failed first-character matches when it is ordinary prose.
 */
export type LineKind = "code" | "stack_trace" | "log" | "env_dump" | "template_hint" | "checklist" | "heading" | "quote" | "prose";

export interface LineVerdict {
  kind: LineKind;
  /** A stack frame proper (not a header, a message or a continuation). */
  frame?: boolean;
  /** An exception or error message line ("TypeError: x is not a function"). */
  exception?: boolean;
  /** A heading label opening a prose line ("**Expected:** it saves"): its length and text. */
  labelLength?: number;
  heading?: string;
  /** Could continue a trace above it (a Python exception tail, a Go function line, carets). */
  continuation?: boolean;
  /** A key with no value ("Binaries:"), which heads an environment dump below it. */
  keyOnly?: boolean;
  /** An environment field's key with no value ("Terminal name/version:"): a short line below it is its value. */
  envKey?: boolean;
  /** A compiler's "note:" or "help:" line, which is output when it follows output. */
  diagnostic?: boolean;
}

const MAX_LINE = 400;

const CHECKLIST = /^(?:[-*+]\s+)?\[[ xX]\]\s/;

/** A whole line in bold ("**To Reproduce**", "__Expected behavior:__"). */
const BOLD_LINE = /^(\*\*|__)(?=\S)(.{1,150}?)\1\s*:?\s*$/;
/** A bold label opening a line ("**Expected behavior:** it saves", "**OS**: Linux"). */
const BOLD_LABEL = /^(\*\*|__)(?=\S)(.{1,80}?)\1(:?)\s+(?=\S)/;
const PLAIN_LABEL = /^([^:\n]{2,80}?):\s+(?=\S)/;

/**
 * Template prompts left in place: the standard GitHub issue-template sentences, step
 * placeholders ("Go to '...'"), fill-in markers, and instructions addressed to the reporter
 * (an imperative such as "provide" or "describe" together with a reference to the form or
 * to the reporter's own issue, so a real request like "Please add dark mode" is kept).
 */
const HINT_PHRASE =
  /\ba clear and concise description\b|^if applicable\b|^add any other (?:context|information|details)|\b(?:complete|fill (?:in|out)) the following\b|^(?:thanks|thank you) for (?:taking the time|reporting|contributing|filing|submitting|opening)|['"‘“]\.{2,}['"’”]|\[\.{2,}\]|<fill in>|\[e\.g\.?[^\]]*\]|^see error\.?$|^steps to reproduce the behaviou?r:?$|^(?:i tried this code|i expected to see this happen|instead,? this happened):?$|\(please specify\)|^(?:_no response_|no response|n\/a|none|tbd|todo)\.?$|^(?:please )?(?:delete|remove|replace) (?:this|these)\b.*\b(?:line|section|template|text|comment|placeholder)s?\b/;
const HINT_IMPERATIVE =
  /^(?:please,?\s+)?(?:provide|describe|explain|include|paste|attach|share|list|tell us|let us know|write|give|enter|fill in|complete|link|mention|specify|summari[sz]e|outline|upload)\b/;
const HINT_DIRECTED =
  /\bif (?:applicable|possible|relevant|any|needed|necessary)\b|\b(?:here|below|above)\b|\bthe following\b|\bthis (?:issue|bug|template|form|section|report|request|field|box)\b|\byour (?:issue|problem|request|environment|setup|system|use ?case|bug|question|proposal|suggestion|feature request|report)\b|\byou (?:expected|were expecting|would like|'d like)\b|\bwhat (?:happened|you|the (?:bug|problem|issue) is)\b/;
const QUESTION_START = /^(?:what|which|how|did|do|does|have|are|is|can)\b/;
const QUESTION_TOPIC = /\b(?:expect(?:ed)?|version|happen(?:ed)?|reproduce|steps|environment|os|browser|platform|installed)\b/;
const HINT_SIGNAL =
  /concise|applicable|any other|the following|thank|\.\.|<fill|e\.g|see error|steps to|response|n\/a|none|tbd|todo|provide|describe|explain|include|paste|attach|share|list|tell us|let us|write|give|enter|fill|complete|link|mention|specify|summar|outline|upload|delete|remove|replace|\?$/;

/** Template prompts are short; longer sentences are never taken for one. */
const MAX_HINT = 400;

/** Whether one sentence is a template prompt. `lower` is already lower-cased and trimmed. */
export function isHintSentence(lower: string, markdown: boolean): boolean {
  if (lower.length > MAX_HINT) return false;
  if (HINT_PHRASE.test(lower)) return true;
  // Instructions and questions to the reporter come with issue templates, which are markdown.
  if (!markdown) return false;
  if (HINT_IMPERATIVE.test(lower) && HINT_DIRECTED.test(lower)) return true;
  // A question put to the reporter about expectations, versions or steps ("What did you expect to happen?").
  return lower.endsWith("?") && QUESTION_START.test(lower) && /\byour?\b/.test(lower) && QUESTION_TOPIC.test(lower);
}

/** Cheap pre-test: could any sentence of this (lower-cased) line be a template prompt? */
export const mayHoldHint = (lower: string) => HINT_SIGNAL.test(lower);

const BULLET = /^(?:[-*+•·‣◦▪]|\d{1,3}[.)])\s+/;
/** The line as the env-dump and heading tests see it: no bullet, no emphasis or code marks. */
const normalise = (line: string) =>
  line
    .replace(BULLET, "")
    .replace(/\*\*|__|`/g, "")
    .trim();
const words = (s: string) => (s.match(/\S+/g) ?? []).length;
const ATX_HEADING = /^#{1,6}[ \t]+[A-Za-z][^#\n]{0,120}$/;
/** A label: a few words ending in a colon, no sentence's punctuation before it. */
const LABEL = /^[^.!?;:]{1,60}:$/;
/** Words that make a short line ending in a colon a sentence ("This works fine:", "And I get:"). */
const LABEL_SENTENCE =
  /\b(?:i|we|you|it|this|that|they|there|there's|is|are|was|were|am|be|do|does|did|don't|doesn't|didn't|can|can't|cannot|will|won't|would|should|has|have|had|not)\b/i;
/** A failure named in a short line ("The following crashes rustc:"): a statement, not a label. */
const FAILURE = /\b(?:crash\w*|ICEs?|panic\w*|fail\w*|break\w*|broken|hang\w*|freez\w*|wrong|almost)\b/i;

/**
 * What one line is. `line` is the raw source line without its line break, trimmed at the
 * start; `role` is the role of the section the line sits in.
 */
export function classifyLine(whole: string, role: SectionRole, markdown: boolean): LineVerdict {
  if (FENCE.test(whole)) return { kind: "code" };
  // Long lines are judged by their start, which keeps every test linear; a long run with no
  // space at all is a blob (minified code, base64, a long hash list), not prose.
  if (whole.length > MAX_LINE && !/\s/.test(whole.slice(0, 200))) return { kind: "code" };
  const line = whole.length > MAX_LINE ? whole.slice(0, MAX_LINE) : whole;
  if (FRAME.test(line)) return { kind: "stack_trace", frame: true };
  if (EXCEPTION.test(line) && !/^\w+:$/.test(line)) {
    // "Error: won't sync" is a complaint until a trace follows it or it names something technical.
    if (BARE_EXCEPTION.test(line) && !TECHNICAL.test(line)) return { kind: "prose", exception: true };
    return { kind: "log", exception: true };
  }
  if (LOG.test(line) || isLogAnywhere(line) || (LEVEL.test(line) && TECHNICAL.test(line))) return { kind: "log" };
  if (CHECKLIST.test(line)) return { kind: "checklist" };
  if (!markdown && /^>(?:\s|>|$)/.test(line)) return { kind: "quote" };
  if (/^On .{5,120} wrote:$/.test(line)) return { kind: "quote" };
  // A heading the parser left inside text (under an HTML block's opening tag, or a "#" without its space).
  // It names a section only when it reads as a template's ("### Steps to reproduce the bug"), not a root prompt's command.
  if (markdown && ATX_HEADING.test(line)) {
    const text = line.replace(/^#+\s*/, "");
    return HEADING_START.test(text.toLowerCase()) || sectionRole(normaliseHeading(text)) !== "other"
      ? { kind: "heading", heading: text }
      : { kind: "heading" };
  }
  const norm = normalise(line);
  if (isEnvLine(norm)) return { kind: "env_dump" };
  if (CODE.test(line) || CODE_END.test(line) || isDense(line)) return { kind: "code" };
  if (norm.length < 200 && isHintSentence(norm.toLowerCase(), markdown)) return { kind: "template_hint" };
  const heading = headingOf(line, norm);
  if (heading) return heading;
  if (role === "environment" && isEnvValue(norm)) return { kind: "env_dump" };
  if (isEnvKey(norm) && !FAILURE.test(norm)) return { kind: "env_dump", envKey: true };
  // A short label introducing what follows ("Output:", "Relevant line:", "In nvim:"): no section of its own.
  if (
    norm.endsWith(":") &&
    LABEL.test(norm) &&
    words(norm) <= 4 &&
    !LABEL_SENTENCE.test(norm) &&
    !(FAILURE.test(norm) && words(norm) >= 3)
  ) {
    return { kind: "heading", keyOnly: true };
  }
  return { kind: "prose" };
}

const FILE_NAME = /^[\w.-]*\w\.[A-Za-z]\w{0,5}$/;
/** A field's name alone on its line ("Output", "Version"). */
const FIELD_NAME = /^(?:output|version|versions|config|configuration|logs?|errors?|screenshots?|notes?|summary|details)\s*:?$/i;

function headingOf(line: string, norm: string): LineVerdict | null {
  const bold = BOLD_LINE.exec(line);
  if (bold) {
    // Bold text alone on a line is a heading when it reads like one: a label ending in a colon
    // or a question mark, or a name of a template section ("**Bold claim**" stays prose).
    const inner = bold[2]!.trim();
    const labelled = /[:?]$/.test(inner) || /:\s*$/.test(line);
    if (words(inner) <= 14 && (labelled || HEADING_START.test(inner.toLowerCase()) || sectionRole(normaliseHeading(inner)) !== "other")) {
      return { kind: "heading", heading: inner };
    }
    // A file's name in bold ("**init.lua**") labels the code that follows.
    if (FILE_NAME.test(inner)) return { kind: "heading" };
  }
  const label = BOLD_LABEL.exec(line);
  if (label && (label[2]!.endsWith(":") || label[3] === ":") && words(label[2]!) <= 8) {
    return { kind: "prose", labelLength: label[0].length, heading: label[2]! };
  }
  if (norm.length <= 16 && FIELD_NAME.test(norm)) return { kind: "heading", heading: norm };
  const lower = norm.toLowerCase();
  if (!HEADING_START.test(lower)) return null;
  const n = words(norm);
  if (n <= 12 && (/[:?]$/.test(norm) || (n <= 6 && !/[.!,;]$/.test(norm)))) return { kind: "heading", heading: norm };
  const plain = PLAIN_LABEL.exec(line);
  if (plain && words(plain[1]!) <= 8) return { kind: "prose", labelLength: plain[0].length, heading: plain[1]! };
  return null;
}

export interface LineSlot {
  verdict: LineVerdict;
  /** Leading whitespace of the line, in columns from the physical line start. */
  indent: number;
  blank: boolean;
  /** The line ends with a colon (a trace header such as "thread 'main' panicked at src/main.rs:2:5:"). */
  colon: boolean;
  /** The line's text, trimmed at the start. */
  line: string;
}

/** A line that could be an environment field's value ("xfce4-terminal"), were an environment key above it. */
const isValueLine = (slot: LineSlot) => slot.line.length <= 120 && isEnvValue(normalise(slot.line));
/** A short `key: value` line, which is a dump's when it stands beside one. */
const isField = (slot: LineSlot) => slot.line.length <= 120 && isFieldLine(normalise(slot.line));

/**
 * Context over the lines of one block: lines between and after frames that belong to the
 * trace (a source line indented under a frame, carets, the exception message that ends a
 * Python traceback, Go function lines), the error message heading a trace, and key-only
 * lines ("System:", "Binaries:") heading an environment dump.
 */
export function resolveContext(slots: LineSlot[]): void {
  const base = slots[0]?.indent ?? 0;
  for (let i = 1; i < slots.length; i++) {
    const prev = slots[i - 1]!;
    const cur = slots[i]!;
    if (cur.blank || prev.verdict.kind !== "stack_trace") continue;
    const k = cur.verdict.kind;
    if (k === "stack_trace") continue;
    if (k === "heading" && !cur.verdict.labelLength) continue;
    if (cur.verdict.exception || cur.indent > base + 1 || cur.verdict.continuation || k === "code" || prev.colon) {
      cur.verdict = { kind: "stack_trace" };
    }
  }
  for (let i = slots.length - 2; i >= 0; i--) {
    const next = slots[i + 1]!;
    const cur = slots[i]!;
    if (next.verdict.kind === "stack_trace" && cur.verdict.exception) cur.verdict = { kind: "stack_trace", exception: true };
    const open = cur.verdict.kind === "prose" || cur.verdict.kind === "heading";
    if (next.verdict.kind === "env_dump" && open && !cur.verdict.labelLength && (cur.verdict.keyOnly || isField(cur))) {
      cur.verdict = { kind: "env_dump" };
    }
  }
  let prev: LineSlot | undefined;
  for (const cur of slots) {
    if (cur.blank) continue;
    const k = prev?.verdict.kind;
    if (prev && cur.verdict.kind === "prose" && !cur.verdict.labelLength) {
      // "- Terminal name/version:" with its value on the next line.
      if ((prev.verdict.envKey && isValueLine(cur)) || (k === "env_dump" && isField(cur))) cur.verdict = { kind: "env_dump" };
      // A compiler's "note:" and "help:" lines under its error, or a trace's.
      else if (cur.verdict.diagnostic && (k === "log" || k === "stack_trace" || k === "code" || prev.verdict.continuation)) {
        cur.verdict = { kind: "log" };
      }
      // A line indented under code is more of it ("  capabilities = capabilities" inside a table constructor).
      else if (k === "code" && cur.indent > base + 1) cur.verdict = { kind: "code" };
    }
    prev = cur;
  }
}

/** Marks the context-only features of a line (called before `resolveContext`). */
export function annotate(line: string, verdict: LineVerdict): LineVerdict {
  if (verdict.kind === "prose" && !verdict.labelLength && line.length <= MAX_LINE) {
    if (TRACE_TAIL.test(line) || TRACE_CONTINUATION.test(line)) verdict.continuation = true;
    if (/^[A-Z][\w ()/.-]{0,40}:$/.test(line)) verdict.keyOnly = true;
    if (DIAGNOSTIC.test(line)) verdict.diagnostic = true;
  }
  return verdict;
}
