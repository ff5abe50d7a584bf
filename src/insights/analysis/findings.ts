import type { AspectModel } from "./aspect-mining.js";
import { type Focus, focusedUnits, nearestSignals } from "./focus.js";
import type { QuestionIntent } from "./question.js";
import type { RetrievedRow } from "./retrieval.js";
import { plural } from "./text.js";
import { answersIntent, buildThemes, selectThemes, type Theme } from "./themes.js";
import { topicAspects } from "./topics/aspects.js";
import type { PhraseEmbedder } from "./topics/discover.js";
import type { Unit } from "./units.js";

/**
 * The themes stage (pure): aspects mined across the analysed sources (aspect-mining.ts) → for a
 * focused question, only the statements of the kind it asks for (focus.ts; requests are themed by the
 * capability they ask for) → themes (themes.ts) → the ones the analysis reports.
 */
export interface ThemeLimits {
  /** Themes reported at most, besides coverage. */
  insights: number;
  /** With coverage: the themes reported at most, every aspect `coverageMin` sources mention included. */
  coverageCap: number | null;
  /** Distinct sources that make an aspect one the report must cover. */
  coverageMin: number;
}

export type Findings =
  /** A focused question the analysed sources hold no statement for; `noun` names what it asks for. */
  | { answered: false; noun: string }
  | {
      answered: true;
      reported: Theme[];
      /** Aspects the stored units cannot name (request themes named after a capability): not counted over the scope. */
      unnamed: ReadonlySet<string>;
      limitations: string[];
      /** What the question asked for and no source holds, when the themes are the nearest signals instead. */
      instead?: string;
    };

/** Feedback kinds of an issue tracker's reports; a corpus that is mostly these is read as a tracker. */
const TRACKER_KINDS = new Set(["bug_report", "feature_request", "question"]);
const TRACKER_SHARE = 0.5;

export function findThemes(
  units: Unit[],
  rows: Pick<RetrievedRow, "id" | "feedbackKind" | "title">[],
  question: { intent: QuestionIntent; focus: Focus | null; entityNames: string[] },
  limits: ThemeLimits,
  embed: PhraseEmbedder,
): Findings {
  const { intent, focus, entityNames } = question;
  // One reading of the corpus: its topics, found in every analysed statement whatever the question.
  const tracker = rows.filter((r) => TRACKER_KINDS.has(r.feedbackKind ?? "")).length >= TRACKER_SHARE * rows.length;
  const topics = topicAspects(units, new Map(rows.map((r) => [r.id, r.title])), entityNames, embed, !tracker);
  // A focused question is answered from the statements of the kind it asks for, and only from them.
  let asked = focus ? focusedUnits(focus, units, rows, topics) : units;
  // Nothing answers it: the nearest signals when the question has such, said to be only that.
  let instead: string | undefined;
  let model: AspectModel = topics;
  if (focus && asked.length === 0) {
    const near = nearestSignals(focus, units);
    if (!near) return { answered: false, noun: focus.noun };
    asked = near.units;
    instead = near.noun;
    model = near.model;
  }
  const sourceKinds = new Map(rows.map((r) => [r.id, r.feedbackKind]));
  let themes = buildThemes(asked, model, intent, sourceKinds);
  // Statements of the asked kind that name no topic of the corpus answer nothing either.
  if (focus && themes.length === 0 && !instead) {
    const near = nearestSignals(focus, units);
    if (!near) return { answered: false, noun: focus.noun };
    instead = near.noun;
    themes = buildThemes(near.units, near.model, intent, sourceKinds);
  }
  // A question that asks for one side only ("What do users love?") is answered with that side only.
  // ("What do customers say about the export feature?" names a subject: every side of it answers.)
  const asksOneSide =
    [intent.complaints, intent.praise, intent.requests].filter(Boolean).length === 1 &&
    !intent.requests &&
    intent.aspects.length === 0 &&
    intent.topicTerms.length === 0;
  if (!focus && asksOneSide) {
    themes = themes.filter((t) => answersIntent(t, intent));
    if (themes.length === 0)
      return { answered: false, noun: intent.praise ? "praise" : intent.complaints ? "complaints" : "feature requests" };
  }
  // A signal is one theme, whatever side its statements take.
  if (instead)
    themes = themes.filter((t, i) => themes.findIndex((o) => o.aspect === t.aspect) === i).map((t) => ({ ...t, sources: t.mentions }));
  const { coverageMin, coverageCap } = limits;
  const reported = selectThemes(
    themes,
    intent,
    limits.insights,
    coverageCap === null ? undefined : { minSources: coverageMin, cap: coverageCap },
  );
  const reportedAspects = new Set(reported.map((t) => t.aspect));
  const left = new Set(themes.filter((t) => t.mentions >= coverageMin && !reportedAspects.has(t.aspect)).map((t) => t.aspect));
  const limitations =
    coverageCap !== null && left.size > 0
      ? [`${plural(left.size, "more aspect")} that enough sources mention did not fit in the ${reported.length} themes reported.`]
      : [];
  return { answered: true, reported, unnamed: new Set(), limitations, ...(instead ? { instead } : {}) };
}
