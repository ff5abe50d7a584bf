/**
 * Word stems for matching questions with text: lower-cased, stop words removed, a light
 * suffix strip (enough to match "prices" with "price" and "pricing").
 */
export const STOP = new Set(
  "a an and are as at be but by do does did for from has have how i in is it its of on or our so that the their them they this to was we were what when where which who why will with you your about into than then there these those can could should would just also not no yes any all some more most very much many out over under up down again further once here both each few other own same such only too s t don now".split(
    " ",
  ),
);

export function stem(word: string): string {
  if (word.length <= 4) return word;
  return word.replace(/(ing|ed|es|s|e)$/u, "");
}

export function terms(text: string): string[] {
  const words =
    text
      .toLowerCase()
      .normalize("NFKC")
      .match(/[\p{L}\p{N}]+/gu) ?? [];
  return words.filter((w) => w.length > 1 && !STOP.has(w)).map(stem);
}

export const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;
