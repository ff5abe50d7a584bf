import { plural } from "./text.js";
import type { ThemeSide } from "./theme-sources.js";

/**
 * The sentence a list of an insight's sources carries (`count_basis`): what the insight's count counts,
 * what the list holds, and why the two differ when they do.
 */
const SIDE_WORDS: Record<ThemeSide, string> = {
  complaint: "complain about it or report a problem with it",
  praise: "praise it",
  request: "ask for it",
  neutral: "mention it without taking a side",
  any: "talk about it",
};

const quoted = (names: string[]) => names.map((n) => `"${n}"`).join(", ");

function gone(unavailable: number): string {
  if (unavailable === 0) return "";
  const were = unavailable === 1 ? "was" : "were";
  return ` ${unavailable} of them ${were} deleted or erased since the analysis ran and ${unavailable === 1 ? "is" : "are"} listed as unavailable, without ${unavailable === 1 ? "its" : "their"} words.`;
}

export function themeCountBasis(
  theme: { side: ThemeSide; phrases: string[]; sources: number; sample_sources: number },
  unavailable: number,
): string {
  const sample = plural(theme.sample_sources, "source");
  if (theme.phrases.length === 0) {
    return `The insight counts the distinct sources of its statements in the analysed sample (${sample}); each one is listed.${gone(unavailable)}`;
  }
  const one = theme.phrases.length === 1;
  const side = SIDE_WORDS[theme.side];
  const counted = one ? `name ${quoted(theme.phrases)}` : `name the most often named of ${quoted(theme.phrases)}`;
  const listed = one ? `name ${quoted(theme.phrases)}` : `name any of them`;
  return (
    `The insight counts the larger of two numbers: its sources in the analysed sample (${sample}), and the stored sources in ` +
    `scope whose statements ${counted} and ${side} (${plural(theme.sources, "source")} stated). Listed: the analysed sample's ` +
    `sources first, then every other source in scope stored before the analysis ran whose statements ${listed} and ${side}, ` +
    `newest first. So the list can hold more sources than the count (the analysis may read a sample source's statements ` +
    `otherwise than they are stored${one ? "" : "; a source may name another of the phrases"}), and fewer when sources ` +
    `outside the sample were deleted since.${gone(unavailable)}`
  );
}

/** An insight of an analysis stored before its sources were recorded: only its quoted sources are known. */
export function quotedOnlyBasis(listed: number, total: number): string {
  return (
    `This analysis ran before every source behind an insight was recorded: only the ${plural(listed, "source")} it quotes ` +
    `${listed === 1 ? "is" : "are"} listed, of the ${plural(total, "source")} it states. Run the analysis again to list them all.`
  );
}
