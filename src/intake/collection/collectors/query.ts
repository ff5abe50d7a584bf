import { parseHTML } from "linkedom";
import type { CollectorInput } from "./types.js";

/**
 * How a job becomes a search query:
 * - entity terms: the entity's name, then its keywords (unique, at most 5). These say
 *   *what* is searched and are required: a hit must mention one of them.
 * - objective terms: up to 5 salient words of the objective and questions (no stop
 *   words, at least 4 letters, not already an entity term). Where an API can rank by
 *   optional words (Algolia's `optionalWords`) they steer relevance; where it can only
 *   AND them (reddit, GitHub search) they are left out, so a window read in date order
 *   stays a complete read of the entity's mentions.
 */
const STOP = new Set(
  `about above after again against also among because been before being below between both could does doing down during each
  from further have having here hers herself himself however into itself just like made make many more most much must myself
  only other ours ourselves over same should some such than that their theirs them themselves then there these they this those
  through under until upon very want what when where which while whom whose will with within without would your yours yourself
  yourselves people users user customers customer product products company companies think feel find know need using used does
  across among around really thing things should what's how's why's don't isn't aren't`.split(/\s+/),
);

export function entityTerms(input: Pick<CollectorInput, "entity">): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const raw of [input.entity.name, ...input.entity.keywords]) {
    const term = raw.replace(/["()]/g, " ").replace(/\s+/g, " ").trim();
    if (!term || seen.has(term.toLowerCase())) continue;
    seen.add(term.toLowerCase());
    out.push(term);
    if (out.length === 5) break;
  }
  return out;
}

export function objectiveTerms(input: Pick<CollectorInput, "entity" | "objective" | "questions">): string[] {
  const taken = new Set(
    entityTerms(input)
      .flatMap((t) => t.toLowerCase().split(/\s+/))
      .filter(Boolean),
  );
  const out: string[] = [];
  for (const word of `${input.objective} ${input.questions.join(" ")}`.toLowerCase().match(/[\p{L}\p{N}][\p{L}\p{N}'-]*/gu) ?? []) {
    if (word.length < 4 || STOP.has(word) || taken.has(word)) continue;
    taken.add(word);
    out.push(word);
    if (out.length === 5) break;
  }
  return out;
}

/** `"a" OR "b c"` — the boolean form reddit and GitHub search accept. */
export function orQuery(terms: string[]): string {
  const quoted = terms.map((t) => (/\s/.test(t) ? `"${t}"` : t));
  return quoted.length > 1 ? quoted.join(" OR ") : (quoted[0] ?? "");
}

/** Plain text of an HTML fragment (HN and GitHub bodies), paragraphs kept as blank lines. */
export function htmlToText(html: string | null | undefined): string {
  if (!html) return "";
  if (!/[<&]/.test(html)) return html.trim();
  const marked = html.replace(/<\s*(p|br|\/p|li|\/li|pre|\/pre)\b[^>]*>/gi, (tag) => (/^<\s*br/i.test(tag) ? "\n" : "\n\n"));
  const { document } = parseHTML(`<!doctype html><html><body>${marked}</body></html>`);
  return (document.body.textContent ?? "")
    .replace(/[ \t]+\n/g, "\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}
