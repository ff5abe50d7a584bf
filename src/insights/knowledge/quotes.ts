import { codePointLength } from "../../platform/text.js";

/**
 * Where a quote sits in a captured text, in Unicode code points (the unit of every offset
 * this service answers). A quote either starts exactly at the code point the writer named,
 * or, when none was named, at its first occurrence; anything else is not verbatim.
 */
export interface QuoteSpan {
  start: number;
  end: number;
}

/** The UTF-16 index of code point `offset` of `text`, or -1 past its end (or inside a pair). */
export function utf16Index(text: string, offset: number): number {
  let index = 0;
  for (let taken = 0; taken < offset; taken++) {
    if (index >= text.length) return -1;
    const unit = text.charCodeAt(index);
    const pair = unit >= 0xd800 && unit <= 0xdbff && index + 1 < text.length && (text.charCodeAt(index + 1) & 0xfc00) === 0xdc00;
    index += pair ? 2 : 1;
  }
  return index <= text.length ? index : -1;
}

export function locateQuote(text: string, quote: string, start?: number): QuoteSpan | null {
  if (quote.length === 0) return null;
  if (start !== undefined) {
    const at = utf16Index(text, start);
    if (at < 0 || !text.startsWith(quote, at)) return null;
    return { start, end: start + codePointLength(quote) };
  }
  const at = text.indexOf(quote);
  if (at < 0) return null;
  const from = codePointLength(text.slice(0, at));
  return { start: from, end: from + codePointLength(quote) };
}

/** The text between two code-point offsets. */
export function sliceSpan(text: string, span: QuoteSpan): string {
  const from = utf16Index(text, span.start);
  const to = utf16Index(text, span.end);
  if (from < 0 || to < 0) return "";
  return text.slice(from, to);
}
