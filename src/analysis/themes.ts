import { cosine, hashingVector } from "../embed/hashing.js";
import { type OpinionSpan, opinionUnits, type SentimentLabel } from "../enrichment/opinions.js";
import type { Db } from "../platform/db.js";
import type { RetrievedRow } from "./retrieval.js";

/**
 * From retrieved rows to themes: the rows' opinion units (stored ones, or computed on
 * the fly for rows not yet enriched), scored against the question, grouped by aspect and
 * merged by similarity into themes. The tracked entities' names never name a theme. Everything here is deterministic: same rows, same
 * question, same themes in the same order.
 */
/** An opinion span of a retrieved row, with its stored id (when enriched) and its relevance to the question. */
export interface Unit extends OpinionSpan {
  id: string | null;
  contentId: string;
  relevance: number;
}

export interface Theme {
  key: string;
  units: Unit[];
  weight: number;
}

const STOP = new Set(
  "a an and are as at be but by do does did for from has have how i in is it its of on or our so that the their them they this to was we were what when where which who why will with you your about into than then there these those can could should would just also not no yes any all some more most very much many out over under up down again further once here both each few other own same such only too s t don now".split(
    " ",
  ),
);

/** Lower-cased word stems: a light suffix strip, enough to match "prices" with "price" and "pricing". */
export function terms(text: string): string[] {
  const words =
    text
      .toLowerCase()
      .normalize("NFKC")
      .match(/[\p{L}\p{N}]+/gu) ?? [];
  return words.filter((w) => w.length > 1 && !STOP.has(w)).map(stem);
}

export function stem(word: string): string {
  if (word.length <= 4) return word;
  return word.replace(/(ing|ed|es|s|e)$/u, "");
}

/** The opinion units of the rows: stored when the row is enriched, computed otherwise. */
export async function unitsOf(db: Db, rows: RetrievedRow[]): Promise<{ units: Omit<Unit, "relevance">[]; computed: number }> {
  const stored = await db.opinionUnit.findMany({
    where: { contentId: { in: rows.map((r) => r.id) } },
    orderBy: [{ contentId: "asc" }, { startOffset: "asc" }],
  });
  const byRow = new Map<string, typeof stored>();
  for (const u of stored) byRow.set(u.contentId, [...(byRow.get(u.contentId) ?? []), u]);
  const units: Omit<Unit, "relevance">[] = [];
  let computed = 0;
  for (const row of rows) {
    const have = byRow.get(row.id);
    if (have && have.length > 0) {
      for (const u of have) {
        units.push({
          id: u.id,
          contentId: row.id,
          start: u.startOffset,
          end: u.endOffset,
          text: u.text,
          aspect: u.aspect,
          sentiment: u.sentiment,
          label: u.sentimentLabel as SentimentLabel,
          kind: u.kind === "request" ? "request" : "opinion",
          terms: u.terms,
        });
      }
    } else {
      computed++;
      for (const u of opinionUnits(row.content)) {
        units.push({
          id: null,
          contentId: row.id,
          start: u.start,
          end: u.end,
          text: u.text,
          aspect: u.aspect,
          sentiment: u.sentiment,
          label: u.label,
          kind: u.kind,
          terms: u.terms,
        });
      }
    }
  }
  return { units, computed };
}

/**
 * Relevance of a unit: how much of the question it covers, its row's retrieval rank, and
 * a little for carrying an opinion. Units too short to quote (under 4 words), and neutral
 * units that share no word with the question, score 0.
 */
export function scoreUnits(units: Omit<Unit, "relevance">[], rows: RetrievedRow[], question: string): Unit[] {
  const qTerms = new Set(terms(question));
  const rank = new Map(rows.map((r, i) => [r.id, i]));
  return units.map((u) => {
    const words = u.text.match(/[\p{L}\p{N}]+/gu)?.length ?? 0;
    if (words < 4) return { ...u, relevance: 0 };
    const unitTerms = new Set(terms(u.text));
    const overlap = qTerms.size === 0 ? 0 : [...qTerms].filter((t) => unitTerms.has(t)).length / qTerms.size;
    // A statement that neither touches the question nor carries an opinion is not evidence.
    if (overlap === 0 && u.label === "neutral") return { ...u, relevance: 0 };
    const rowWeight = 1 / (1 + (rank.get(u.contentId) ?? rows.length));
    const aspectHit = u.aspect && terms(u.aspect).some((t) => qTerms.has(t)) ? 0.15 : 0;
    const relevance = 0.55 * overlap + 0.3 * rowWeight + 0.1 * Math.abs(u.sentiment) + aspectHit;
    return { ...u, relevance: Math.round(relevance * 1e4) / 1e4 };
  });
}

/**
 * The theme key of a unit: its aspect without the tracked entities' own names, else the
 * first question word it mentions, else its first salient word, else "general".
 */
function keyOf(unit: Unit, qTerms: Set<string>, nameTerms: Set<string>): string {
  const telling = (word: string) => {
    const t = stem(word.toLowerCase());
    return !nameTerms.has(t) && !STOP.has(word.toLowerCase()) && word.length > 1;
  };
  const aspectWords = (unit.aspect ?? "").split(/\s+/).filter((w) => w && telling(w));
  if (aspectWords.length > 0) return aspectWords.join(" ");
  const words = (
    unit.text
      .toLowerCase()
      .normalize("NFKC")
      .match(/[\p{L}][\p{L}\p{N}]*/gu) ?? []
  ).filter(telling);
  return words.find((w) => qTerms.has(stem(w))) ?? words.find((w) => w.length > 3) ?? "general";
}

/**
 * Groups the most relevant units into themes: by aspect first, then merges themes whose
 * keys share a word stem or whose content words are similar (cosine of hashed vectors of
 * their stop-word-free stems ≥ MERGE_SIMILARITY).
 */
export const MERGE_SIMILARITY = 0.5;

function contentVector(units: Unit[]): number[] {
  return hashingVector(units.flatMap((u) => terms(u.text)).join(" "));
}

export function clusterThemes(units: Unit[], question: string, maxUnits: number, entityNames: string[] = []): Theme[] {
  const qTerms = new Set(terms(question));
  const nameTerms = new Set(entityNames.flatMap(terms));
  const picked = units
    .filter((u) => u.relevance > 0)
    .sort((a, b) => b.relevance - a.relevance || a.contentId.localeCompare(b.contentId) || a.start - b.start)
    .slice(0, maxUnits);
  const groups = new Map<string, Unit[]>();
  for (const unit of picked) {
    const key = keyOf(unit, qTerms, nameTerms);
    groups.set(key, [...(groups.get(key) ?? []), unit]);
  }
  let themes = [...groups.entries()].map(([key, members]) => ({
    key,
    units: members,
    vector: hashingVector(members.map((m) => m.text).join(" ")),
  }));
  themes.sort((a, b) => weightOf(b.units) - weightOf(a.units) || a.key.localeCompare(b.key));

  const merged: typeof themes = [];
  for (const theme of themes) {
    const stems = new Set(terms(theme.key));
    const into = merged.find((m) => terms(m.key).some((t) => stems.has(t)) || cosine(m.vector, theme.vector) >= MERGE_SIMILARITY);
    if (into) {
      into.units.push(...theme.units);
      into.vector = contentVector(into.units);
    } else merged.push({ ...theme, units: [...theme.units] });
  }
  themes = merged;
  return themes
    .map((t) => ({ key: t.key, units: t.units, weight: weightOf(t.units) }))
    .sort((a, b) => b.weight - a.weight || a.key.localeCompare(b.key));
}

function weightOf(units: Unit[]): number {
  const rows = new Set(units.map((u) => u.contentId)).size;
  return units.reduce((sum, u) => sum + u.relevance, 0) * (1 + 0.25 * (rows - 1));
}
