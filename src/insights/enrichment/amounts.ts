import type { Token } from "./tokens.js";

/**
 * Amounts of money and spans of time in a sentence's tokens, the two kinds of entity the cues read
 * (`@MONEY`, `@DURATION` in feedback-cues.ts; a price names the pricing aspect). Marked on the tokens'
 * `entity` by a few rules over wink-nlp's token types and tags, instead of wink-nlp's general entity
 * recogniser, which costs about an eighth of the analysis and also reads "lost 20 pounds" as money.
 *
 * - MONEY: a currency symbol with the number written against or beside it ("$10", "10 $", "€ 5"), and a
 *   number with a currency word or code after it ("10 dollars", "5 bucks", "20 EUR") or a code before it
 *   ("USD 20").
 * - DURATION: a unit of time ("day", "minutes") with the quantity before it ("10 minutes", "a few days",
 *   "a couple of weeks", "half an hour") and an approximation before that ("around 10 minutes", "more
 *   than a year").
 */
const CURRENCY_WORDS = new Set(["dollar", "buck", "euro", "cent", "rupee", "yen"]);
const CURRENCY_CODES = new Set(["usd", "eur", "gbp", "inr", "cad", "aud", "jpy", "chf", "cny"]);
const DURATION_UNITS = new Set([
  "millisecond",
  "second",
  "minute",
  "hour",
  "day",
  "week",
  "month",
  "year",
  "decade",
  "sec",
  "min",
  "hr",
  "mins",
  "hrs",
]);
/** Words of a quantity before a unit of time: "a few", "several", "a couple of", "half an". */
const QUANTITY_WORDS = new Set(["a", "an", "few", "several", "couple", "of", "some", "half", "many"]);
/** Words that approximate a quantity: "around", "over", "more than". */
const APPROXIMATIONS = new Set([
  "about",
  "around",
  "almost",
  "nearly",
  "roughly",
  "approximately",
  "over",
  "under",
  "more",
  "less",
  "than",
]);

const isNumber = (t: Token) => t.type === "number" || t.pos === "NUM";
/** A word of the quantity before a unit of time; an amount of money is none ("$10 a month"). */
const isQuantity = (t: Token) => t.entity !== "MONEY" && (isNumber(t) || QUANTITY_WORDS.has(t.normal));

function markMoney(tokens: Token[]): void {
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (t.type === "currency") {
      t.entity = "MONEY";
      const before = tokens[i - 1];
      const after = tokens[i + 1];
      if (before && before.type === "number") before.entity = "MONEY";
      if (after && after.type === "number") after.entity = "MONEY";
    } else if (t.type === "number") {
      const after = tokens[i + 1];
      const before = tokens[i - 1];
      if (after && (CURRENCY_WORDS.has(after.lemma) || CURRENCY_CODES.has(after.normal))) {
        t.entity = "MONEY";
        after.entity = "MONEY";
      } else if (before && CURRENCY_CODES.has(before.normal)) {
        t.entity = "MONEY";
        before.entity = "MONEY";
      }
    }
  }
}

function markDurations(tokens: Token[]): void {
  for (let i = 0; i < tokens.length; i++) {
    if (!DURATION_UNITS.has(tokens[i]!.lemma)) continue;
    let start = i;
    // The quantity: numbers and quantity words ("10", "two", "a few", "a couple of", "half an").
    while (start > 0 && isQuantity(tokens[start - 1]!)) start--;
    // Its approximation, only before a quantity ("around 10 minutes", "more than a year"; not "over days").
    if (start < i) while (start > 0 && APPROXIMATIONS.has(tokens[start - 1]!.normal)) start--;
    for (let j = start; j <= i; j++) tokens[j]!.entity = "DURATION";
  }
}

/** Marks the amounts of money and the spans of time among `tokens` (their `entity`). */
export function markAmounts(tokens: Token[]): void {
  markMoney(tokens);
  markDurations(tokens);
}
