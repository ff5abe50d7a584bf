import { ANALYSER_VERSION, type OpinionSpan, opinionUnits, type SentimentLabel } from "../enrichment/opinions.js";
import type { RetrievedRow } from "./retrieval.js";
import { terms } from "./text.js";

/**
 * The units stage (pure): the opinion units the analysis works on, from the analysed rows and the
 * units stored for them (read beforehand by `loadStoredUnits`, load.ts), then scored for evidence order.
 */
export interface Unit extends OpinionSpan {
  id: string | null;
  contentId: string;
  relevance: number;
}

/** An opinion unit as stored (opinion_units), the fields the units stage reads. */
export interface StoredUnit {
  id: string;
  contentId: string;
  startOffset: number;
  endOffset: number;
  text: string;
  aspect: string | null;
  sentiment: number;
  sentimentLabel: string;
  kind: string;
  terms: string[];
  comparedWith: string | null;
  churn: boolean;
  analyserVersion: number;
}

/** The rows' row and content, what the units stage needs of a retrieved row. */
export type UnitRow = Pick<RetrievedRow, "id" | "content"> & Partial<Pick<RetrievedRow, "feedbackKind">>;

/**
 * The opinion units of the rows: stored when the row was enriched by the current analyser,
 * computed from the content otherwise (rows not enriched yet, or enriched by an older
 * analyser, whose units keep their ids where a recomputed unit has the same span). `computed`
 * counts rows not enriched at all (no stored units and no stored feedback kind). Units come in row order, each row's in text order.
 */
export function unitsOf(rows: UnitRow[], stored: StoredUnit[]): { units: Omit<Unit, "relevance">[]; computed: number } {
  const byRow = new Map<string, StoredUnit[]>();
  for (const u of stored) byRow.set(u.contentId, [...(byRow.get(u.contentId) ?? []), u]);
  const units: Omit<Unit, "relevance">[] = [];
  let computed = 0;
  for (const row of rows) {
    const have = [...(byRow.get(row.id) ?? [])].sort((a, b) => a.startOffset - b.startOffset);
    if (have.length > 0 && have.every((u) => u.analyserVersion === ANALYSER_VERSION)) {
      for (const u of have) units.push(fromStored(u));
      continue;
    }
    // Enrichment stores a kind with every row it read; a row it read that holds no statement is enriched all the same.
    if (have.length === 0 && !row.feedbackKind) computed++;
    const idOf = new Map(have.map((u) => [`${u.startOffset}:${u.endOffset}`, u.id]));
    for (const u of opinionUnits(row.content)) units.push({ ...u, id: idOf.get(`${u.start}:${u.end}`) ?? null, contentId: row.id });
  }
  return { units, computed };
}

function fromStored(u: StoredUnit): Omit<Unit, "relevance"> {
  return {
    id: u.id,
    contentId: u.contentId,
    start: u.startOffset,
    end: u.endOffset,
    text: u.text,
    aspect: u.aspect,
    sentiment: u.sentiment,
    label: u.sentimentLabel as SentimentLabel,
    kind: u.kind as OpinionSpan["kind"],
    terms: u.terms,
    comparedWith: u.comparedWith,
    churn: u.churn,
  };
}

/**
 * Relevance of a unit, used to order evidence: how much of the question it covers, its
 * row's retrieval rank, and its opinion strength.
 */
export function scoreUnits(units: Omit<Unit, "relevance">[], rows: Pick<RetrievedRow, "id">[], question: string): Unit[] {
  const qTerms = new Set(terms(question));
  const rank = new Map(rows.map((r, i) => [r.id, i]));
  return units.map((u) => {
    const unitTerms = new Set(terms(u.text));
    const overlap = qTerms.size === 0 ? 0 : [...qTerms].filter((t) => unitTerms.has(t)).length / qTerms.size;
    const rowWeight = 1 / (1 + (rank.get(u.contentId) ?? rows.length));
    const relevance = 0.55 * overlap + 0.3 * rowWeight + 0.15 * Math.abs(u.sentiment);
    return { ...u, relevance: Math.round(relevance * 1e4) / 1e4 };
  });
}
