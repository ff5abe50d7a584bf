import { type Canvas, isBlank, textCuts } from "./canvas.js";

/**
 * Plain text (app reviews, transcripts, forum posts without markup): no markdown parsing,
 * but blocks between blank lines still go through the line heuristics, and a few shapes
 * that plain text shares with markdown are honoured: ``` fences, "> " quoted lines, URLs
 * and `backticked` code.
 */

export function paintPlain(canvas: Canvas): void {
  const { text } = canvas;
  let blockStart = -1;
  let blockEnd = -1;
  let fence: string | null = null;
  let fenceStart = 0;
  const flush = () => {
    if (blockStart >= 0) canvas.prose(blockStart, blockEnd, textCuts(text, blockStart, blockEnd, true));
    blockStart = -1;
  };
  let ls = 0;
  while (ls <= text.length) {
    let le = text.indexOf("\n", ls);
    if (le === -1) le = text.length;
    let start = ls;
    while (start < le && isBlank(text.charCodeAt(start))) start++;
    let end = le;
    while (end > start && isBlank(text.charCodeAt(end - 1))) end--;
    const head = text.slice(start, start + 3);
    if (fence) {
      if (head === fence) {
        canvas.fill(fenceStart, end, "code");
        fence = null;
      }
    } else if (head === "```" || head === "~~~") {
      flush();
      fence = head;
      fenceStart = start;
    } else if (start >= end) flush();
    else if (text.charCodeAt(start) === 62 /* > */ && (start + 1 >= end || /[\s>]/.test(text.charAt(start + 1)))) {
      flush();
      canvas.fill(start, end, "quote");
    } else {
      if (blockStart < 0) blockStart = ls;
      blockEnd = end;
    }
    ls = le + 1;
  }
  if (fence) canvas.fill(fenceStart, text.length, "code");
  flush();
}
