/**
 * The unit of every length bound: Unicode code points. A request field's "at most 500
 * characters" means 500 code points, whether the schema checks it (zod's string length
 * checks count code points) or code does (these helpers); quote and opinion-unit offsets
 * count the same way. An emoji is one character, not two UTF-16 units.
 */
export function codePointLength(text: string): number {
  let count = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i++;
    }
    count++;
  }
  return count;
}

/** The first `max` code points of `text` (never half of a surrogate pair). */
export function clipCodePoints(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = 0;
  for (let taken = 0; taken < max && end < text.length; taken++) {
    const unit = text.charCodeAt(end);
    const pair = unit >= 0xd800 && unit <= 0xdbff && end + 1 < text.length && (text.charCodeAt(end + 1) & 0xfc00) === 0xdc00;
    end += pair ? 2 : 1;
  }
  return text.slice(0, end);
}

/** `text` cut into pieces of at most `max` code points each (never splitting a surrogate pair). */
export function splitCodePoints(text: string, max: number): string[] {
  const parts: string[] = [];
  let rest = text;
  while (rest.length > 0) {
    const part = clipCodePoints(rest, max);
    parts.push(part);
    rest = rest.slice(part.length);
  }
  return parts;
}

/**
 * Characters that show nothing by themselves: white space, controls, format characters
 * (zero-width spaces and joiners, bidirectional controls) and other default-ignorable code
 * points (variation selectors, fillers). A name made only of them looks empty.
 */
const INVISIBLE_ONLY = /^[\p{White_Space}\p{Cc}\p{Cf}\p{Default_Ignorable_Code_Point}]*$/u;

export const isInvisible = (text: string): boolean => INVISIBLE_ONLY.test(text);
