import MarkdownIt from "markdown-it";

/**
 * An independent judge of where an original's markup lies, for measuring how many opinion units
 * fall inside it. It shares no code with the engine's structure reader (src/insights/enrichment/structure):
 * markdown-it (a different parser) marks the lines of fenced and indented code, raw HTML blocks
 * (template comments `<!-- … -->`), headings, tables and block quotes; plain regular expressions,
 * written for this judge alone, mark lines of stack traces, logs and environment or version dumps.
 * A unit is inside markup when most of its characters lie on such lines.
 */
const md = new MarkdownIt({ html: true });
const MARKUP_BLOCKS = new Set(["fence", "code_block", "html_block", "heading_open", "table_open", "blockquote_open"]);

const TRACE = [
  /^\s*Traceback \(most recent call last\)/,
  /^\s*File "[^"]+", line \d+/,
  /^\s+at [\w$.<>[\]/ -]+ ?\(?[^)]*:\d+(?::\d+)?\)?\s*$/,
  /^\s*(?:[\w.]+\.)?[A-Z]\w*(?:Error|Exception)(?::|$)/,
  /^\s*thread '.*' panicked at/,
  /^\s*goroutine \d+ \[/,
];
const LOG = [
  /^\s*\[?\d{4}-\d\d-\d\d[T ]\d\d:\d\d/,
  /^\s*\[?(?:INFO|WARN|WARNING|ERROR|DEBUG|TRACE|FATAL)\]?[\s:]/,
  /^\s*\$ \S/,
  /^\s*[\w./-]+\.\w+:\d+:\d+:? (?:error|warning)/i,
];
const DUMP = [
  /^\s*[-*]?\s*[\w .()/-]{1,40}\b(?:version|ver)\b\s*[:=]\s*\S/i,
  /^\s*[-*]?\s*(?:os|platform|python|node(?:\.js)?|browser|device|cuda|gpu|cpu|kernel|arch)\s*(?:\([^)]*\))?\s*[:=]\s*\S/i,
  /^\s*[\w.-]+\s*==\s*\d[\w.]*\s*$/,
  /^\s*[-*]?\s*[\w.-]+:\s*(?:not installed|n\/a|none|\d+(?:\.\d+)+\S*)\s*$/i,
];

export type MarkupKind = "block" | "trace" | "log" | "dump";

/** For each line of the text, the markup it is, or null for prose. */
export function markupLines(text: string): (MarkupKind | null)[] {
  const lines = text.split("\n");
  const out: (MarkupKind | null)[] = lines.map(() => null);
  for (const token of md.parse(text, {})) {
    if (!MARKUP_BLOCKS.has(token.type) || !token.map) continue;
    for (let i = token.map[0]; i < token.map[1]; i++) out[i] = "block";
  }
  lines.forEach((line, i) => {
    if (out[i]) return;
    if (TRACE.some((r) => r.test(line))) out[i] = "trace";
    else if (LOG.some((r) => r.test(line))) out[i] = "log";
    else if (DUMP.some((r) => r.test(line))) out[i] = "dump";
  });
  return out;
}

/** A judge for one text: whether the UTF-16 span [start, end) lies mostly on markup lines. */
export function markupJudge(text: string): (start: number, end: number) => boolean {
  const kinds = markupLines(text);
  const lineOf = new Int32Array(text.length + 1);
  let line = 0;
  for (let i = 0; i < text.length; i++) {
    lineOf[i] = line;
    if (text.charCodeAt(i) === 10) line++;
  }
  lineOf[text.length] = line;
  return (start, end) => {
    let inside = 0;
    let counted = 0;
    for (let i = start; i < end; i++) {
      if (text.charCodeAt(i) <= 32) continue;
      counted++;
      if (kinds[lineOf[i]!]) inside++;
    }
    return counted > 0 && inside / counted > 0.5;
  };
}
