import { parser as commonmark, Table, TaskList } from "@lezer/markdown";
import { type Canvas, type Cut, textCuts } from "./canvas.js";
import { normaliseHeading } from "./sections.js";

/**
 * Markdown documents, parsed by @lezer/markdown (CommonMark with GitHub's tables and task
 * lists). Every node carries exact UTF-16 offsets into the source, so each block is painted
 * where it stands; paragraphs and list-item text go on to the line heuristics (canvas.ts),
 * with their inline code, inline HTML, comments and autolinks cut out.
 *
 * The parser's emphasis and link resolution are left out: emphasis marks stay in prose as
 * written, and links, images and bare URLs are found by bounded expressions over each
 * paragraph (`linkCuts`, `textCuts`). Both resolutions are quadratic in the number of
 * unmatched delimiters of a paragraph (200 KB of "[a](" took 24 s); the expressions are
 * linear, and the GFM autolink extension they replace cost some 40% of parse time.
 */
const parser = commonmark.configure([Table, TaskList, { remove: ["Emphasis", "Link", "Image"] }]);
/** Containers nested this deep ("> > > - - …") make the parser quadratic; such a text is read as plain text. */
export const TOO_DEEP = /^[ \t]*(?:(?:>|[-*+](?=[ \t])|\d{1,9}[.)](?=[ \t]))[ \t]*){32}/m;
type Cursor = ReturnType<ReturnType<typeof parser.parse>["cursor"]>;

/**
 * The parser sees "\r\n" line ends as a space before "\n" (same length, so offsets stand): it takes a
 * line holding only "\r" for text, so a `<details>` block (which ends at a blank line) would otherwise
 * run on over the code fences and output below it, to the end of a text written on Windows.
 */
export function paintMarkdown(canvas: Canvas): void {
  const source = canvas.text.includes("\r") ? canvas.text.replace(/\r(?=\n)/g, " ") : canvas.text;
  const cursor = parser.parse(source).cursor();
  if (!cursor.firstChild()) return;
  do block(cursor, canvas);
  while (cursor.nextSibling());
}

function children(c: Cursor, canvas: Canvas): void {
  if (!c.firstChild()) return;
  do block(c, canvas);
  while (c.nextSibling());
  c.parent();
}

function hasChild(c: Cursor, name: string): boolean {
  if (!c.firstChild()) return false;
  let found = false;
  do found = c.name === name;
  while (!found && c.nextSibling());
  c.parent();
  return found;
}

function block(c: Cursor, canvas: Canvas): void {
  const { from, to, name } = c;
  switch (name) {
    case "Paragraph": {
      const cuts = [...textCuts(canvas.text, from, to, false), ...linkCuts(canvas.text, from, to)];
      inline(c, cuts);
      canvas.prose(from, to, cuts);
      return;
    }
    case "BulletList":
    case "OrderedList":
      children(c, canvas);
      return;
    case "ListItem":
      // Task-list items are the checkboxes of templates ("- [x] I have searched existing issues").
      if (hasChild(c, "Task")) canvas.fill(from, to, "checklist");
      else children(c, canvas);
      return;
    case "FencedCode":
    case "CodeBlock":
      canvas.fill(from, to, "code");
      return;
    case "Blockquote":
      canvas.fill(from, to, "quote");
      return;
    case "Table":
      canvas.fill(from, to, "table");
      return;
    case "LinkReference":
      canvas.fill(from, to, "url");
      return;
    case "HTMLBlock":
    case "CommentBlock":
    case "ProcessingInstructionBlock":
      paintHtml(from, to, canvas);
      return;
    default:
      if (name.startsWith("ATXHeading") || name.startsWith("SetextHeading")) {
        canvas.fill(from, to, "heading");
        const raw = canvas.text.slice(from, to);
        canvas.setSection(from, normaliseHeading(name.startsWith("Setext") ? raw.replace(/\n[ \t]*[=-]+[ \t]*\r?$/, "") : raw));
      } else canvas.fill(from, to, "markup");
  }
}

/** Cut-outs among the inline children of the node under the cursor. */
function inline(c: Cursor, cuts: Cut[]): void {
  if (!c.firstChild()) return;
  do inlineNode(c, cuts);
  while (c.nextSibling());
  c.parent();
}

function inlineNode(c: Cursor, cuts: Cut[]): void {
  const { from: start, to: end } = c;
  switch (c.name) {
    case "InlineCode":
      cuts.push({ start, end, kind: "inline_code" });
      return;
    case "Comment":
      cuts.push({ start, end, kind: "html_comment" });
      return;
    case "HTMLTag":
    case "ProcessingInstruction":
      cuts.push({ start, end, kind: "html" });
      return;
    case "Autolink":
      cuts.push({ start, end, kind: "url" });
      return;
  }
}

/**
 * Inline links `[text](url "title")`, reference links `[text][ref]` and images: a link keeps
 * its text as prose, its brackets are markup and its destination a URL; link text that is
 * itself a URL, and a whole image, are URLs. A bracketed phrase with no destination ("[sic]")
 * stays as written. Quantifiers are bounded, so the scan stays linear.
 */
const LINK =
  /(!?)\[((?:[^[\]\\]|\\[\s\S]|\[[^[\]\n]{0,200}\]){0,300})\](?:\(\s*(?:<[^<>\n]{0,2000}>|(?:[^()\s\\]|\\[\s\S]|\([^()\s]{0,200}\)){0,2000})(?:\s+(?:"[^"\n]{0,300}"|'[^'\n]{0,300}'|\([^()\n]{0,300}\)))?\s*\)|(\[[^[\]\n]{0,200}\]))/g;
const URL_LIKE = /^\s*(?:https?:\/\/|www\.)\S*\s*$/;

export function linkCuts(text: string, from: number, to: number): Cut[] {
  const slice = text.slice(from, to);
  if (!slice.includes("](") && !slice.includes("][")) return [];
  const cuts: Cut[] = [];
  LINK.lastIndex = 0;
  for (let m = LINK.exec(slice); m; m = LINK.exec(slice)) {
    const start = from + m.index;
    const end = start + m[0].length;
    const label = m[2]!;
    if (m[1] || URL_LIKE.test(label)) {
      cuts.push({ start, end, kind: "url" });
      continue;
    }
    const close = start + 1 + label.length;
    cuts.push({ start, end: start + 1, kind: "markup" });
    cuts.push({ start: close, end, kind: m[3] ? "markup" : "url" });
  }
  return cuts;
}

const HTML_TOKEN = /<!--[\s\S]*?(?:-->|$)|<\/?([A-Za-z][\w-]*)\b[^>]*>?|<[?!][^>]*>?/g;
const VOID = new Set(["br", "img", "hr", "input", "meta", "link", "source", "wbr", "col", "area", "embed", "track", "param"]);
const CODE_TAGS = new Set(["pre", "code", "script", "style", "textarea", "kbd", "samp", "var", "svg", "math", "template", "tt"]);
const TABLE_TAGS = new Set(["table", "thead", "tbody", "tfoot", "tr", "td", "th", "caption", "colgroup"]);
const HEADING_TAGS = new Set(["summary", "h1", "h2", "h3", "h4", "h5", "h6"]);
const PROSE_TAGS = new Set([
  ...["details", "p", "div", "span", "b", "i", "em", "strong", "u", "s", "sub", "sup", "center", "a", "font", "small", "big"],
  ...["li", "ul", "ol", "dd", "dt", "dl", "section", "article", "mark", "ins", "del", "abbr", "cite", "q", "body", "html", "main"],
  ...["header", "footer", "figure", "figcaption", "picture", "nobr", "strike"],
]);

/**
 * A raw HTML block: tags are `html`, comments `html_comment`; text between tags is prose
 * inside prose-bearing elements (details, p, div …), a heading inside <summary> or <h1>–<h6>
 * (it names the collapsed section), code inside <pre>/<code>, and `html` inside anything
 * unknown (an XML config pasted without a fence).
 */
function paintHtml(from: number, to: number, canvas: Canvas): void {
  const { text } = canvas;
  const slice = text.slice(from, to);
  const stack: string[] = [];
  let last = 0;
  const segment = (start: number, end: number) => {
    if (!/[^\s]/.test(slice.slice(start, end))) return;
    let kind: "prose" | "code" | "heading" | "quote" | "table" | "html" = "prose";
    for (let i = stack.length - 1; i >= 0; i--) {
      const tag = stack[i]!;
      if (CODE_TAGS.has(tag)) kind = "code";
      else if (HEADING_TAGS.has(tag)) kind = kind === "prose" ? "heading" : kind;
      else if (tag === "blockquote") kind = "quote";
      else if (TABLE_TAGS.has(tag)) kind = kind === "prose" ? "table" : kind;
      else if (!PROSE_TAGS.has(tag)) kind = kind === "prose" ? "html" : kind;
      else continue;
      break;
    }
    if (kind === "prose") canvas.prose(from + start, from + end, []);
    else canvas.fill(from + start, from + end, kind);
    if (kind === "heading") canvas.setSection(from + start, normaliseHeading(slice.slice(start, end)));
  };
  HTML_TOKEN.lastIndex = 0;
  for (let m = HTML_TOKEN.exec(slice); m; m = HTML_TOKEN.exec(slice)) {
    if (m[0].length === 0) {
      HTML_TOKEN.lastIndex++;
      continue;
    }
    segment(last, m.index);
    last = m.index + m[0].length;
    const isComment = m[0].startsWith("<!--");
    canvas.fill(from + m.index, from + last, isComment ? "html_comment" : "html");
    const tag = m[1]?.toLowerCase();
    if (!tag) continue;
    if (m[0].startsWith("</")) {
      const at = stack.lastIndexOf(tag);
      if (at >= 0) stack.length = at;
      if (tag === "details" && canvas.detailsSections.length > 0) canvas.setSection(from + last, canvas.detailsSections.pop() ?? null);
    } else if (!VOID.has(tag) && !m[0].endsWith("/>")) {
      if (stack.length < 64) stack.push(tag);
      if (tag === "details" && canvas.detailsSections.length < 64) canvas.detailsSections.push(canvas.section);
    }
  }
  segment(last, slice.length);
}
