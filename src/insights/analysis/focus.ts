import type { AspectModel } from "./aspect-mining.js";
import type { QuestionIntent } from "./question.js";
import type { RetrievedRow } from "./retrieval.js";
import type { Unit } from "./units.js";

/**
 * What a focused question is answered from. "Which features do users request most?" is answered
 * from requests, "What bugs do users report?" from described defects, "Why do users give up or
 * switch?" from churn signals and unfavourable comparisons, "What do users like compared with
 * alternatives?" from comparisons, "How is onboarding?" from statements about getting started. Units
 * of the asked kind from sources of the matching feedback kind come first: a feature request in a
 * bug report is still a request, but a corpus of requests answers better. A general question
 * ("What do people think?") uses every unit.
 */
export type Ask = NonNullable<QuestionIntent["ask"]>;

export interface Focus {
  ask: Ask;
  /** Unit kinds and source feedback kinds that retrieval may top up with. */
  unitKinds: string[];
  feedbackKinds: string[];
  churn: boolean;
  compared: boolean;
  /** What the answer calls the units ("feature requests"), for saying plainly when there are none. */
  noun: string;
}

const ONBOARDING_ASPECTS = new Set(["onboarding", "ease of use", "documentation", "login and account"]);

export function focusOf(intent: QuestionIntent): Focus | null {
  switch (intent.ask) {
    case "requests":
      return {
        ask: "requests",
        unitKinds: ["request"],
        feedbackKinds: ["feature_request"],
        churn: false,
        compared: false,
        noun: "feature requests",
      };
    case "bugs":
      return { ask: "bugs", unitKinds: ["bug"], feedbackKinds: ["bug_report"], churn: false, compared: false, noun: "bug reports" };
    case "churn":
      return { ask: "churn", unitKinds: [], feedbackKinds: [], churn: true, compared: true, noun: "reasons to leave or switch" };
    case "comparison":
      return { ask: "comparison", unitKinds: [], feedbackKinds: [], churn: false, compared: true, noun: "comparisons with alternatives" };
    case "updates":
      return {
        ask: "updates",
        unitKinds: ["bug"],
        feedbackKinds: ["bug_report"],
        churn: false,
        compared: false,
        noun: "problems that appeared after an update",
      };
    case "onboarding":
      return {
        ask: "onboarding",
        unitKinds: [],
        feedbackKinds: [],
        churn: false,
        compared: false,
        noun: "statements about getting started",
      };
    default:
      return null;
  }
}

function matches(focus: Focus, u: Unit, model: AspectModel, sourceKind: string | null): boolean {
  switch (focus.ask) {
    case "requests":
      return u.kind === "request" || (sourceKind === "feature_request" && u.kind !== "bug");
    case "bugs":
      return u.kind === "bug" || (sourceKind === "bug_report" && u.kind !== "request");
    case "churn":
      return u.churn || (u.comparedWith !== null && u.label === "negative");
    case "comparison":
      return u.comparedWith !== null;
    case "updates":
      return AFTER_UPDATE.test(u.text) && (u.kind === "bug" || u.label === "negative" || sourceKind === "bug_report");
    case "onboarding": {
      const aspect = model.aspectOf(u);
      return (aspect !== null && ONBOARDING_ASPECTS.has(aspect)) || u.terms.some((t) => ONBOARDING_ASPECTS.has(t));
    }
  }
}

/** A statement that places a problem after a change of version ("since the last update", "used to work"). */
const AFTER_UPDATE =
  /\b(?:updat(?:e|es|ed|ing)|upgrad(?:e|es|ed|ing)|new(?:est)? (?:version|release)|latest (?:version|release)|since (?:version|release|v?\d)|regressions?|used to work|no longer works?|stopped working|broke (?:after|since|with))\b/i;

/**
 * What comes nearest to leaving when nobody says they left: going back to an older release, working
 * around a problem, or weighing another tool ("downgraded to 2.1", "as a workaround", "switched the
 * loader to X"; comparisons are read by enrichment).
 */
const NEAR_CHURN =
  /\b(?:downgrad\w*|roll(?:ed|ing)? ?back|revert(?:ed|ing)? (?:to|back)|(?:older|previous|earlier) (?:version|release)|pinn(?:ed|ing) (?:to|the)|workarounds?|work(?:ed|ing)? around)\b/i;

export interface NearestSignals {
  /** What the question asked for and the sources do not hold ("reasons to leave or switch"). */
  noun: string;
  units: Unit[];
  /** The signals as themes: each statement under the kind of signal it gives. */
  model: AspectModel;
}

const SIGNALS: { key: string; label: string; test: (u: Unit) => boolean }[] = [
  {
    key: "going back to an older release",
    label: "Going back to an older release",
    test: (u) =>
      /\b(?:downgrad\w*|roll(?:ed|ing)? ?back|revert(?:ed|ing)? (?:to|back)|(?:older|previous|earlier) (?:version|release)|pinn(?:ed|ing) (?:to|the))\b/i.test(
        u.text,
      ),
  },
  { key: "workarounds", label: "Workarounds", test: (u) => /\b(?:workarounds?|work(?:ed|ing)? around)\b/i.test(u.text) },
  {
    key: "comparisons with other tools",
    label: "Comparisons with other tools",
    // Moving to another tool is churn itself (enrichment reads it); "switched to X" may be to this product.
    test: (u) => u.comparedWith !== null,
  },
];

function signalModel(): AspectModel {
  const labels = new Map(SIGNALS.map((s) => [s.key, s.label]));
  return {
    aspectOf: (u) => SIGNALS.find((s) => s.test(u as Unit))?.key ?? null,
    label: (aspect) => labels.get(aspect) ?? aspect,
    support: () => 0,
    minSupport: 1,
  };
}

/**
 * For a question nothing answers, the statements that come nearest, when the question has such
 * (churn: downgrades, workarounds, comparisons with other tools); null otherwise.
 */
export function nearestSignals(focus: Focus, units: Unit[]): NearestSignals | null {
  if (focus.ask !== "churn") return null;
  const near = units.filter((u) => u.comparedWith !== null || NEAR_CHURN.test(u.text));
  return near.length === 0 ? null : { noun: focus.noun, units: near, model: signalModel() };
}

/** Fewer units than this from sources of the matching feedback kind: units of every source are used. */
const MIN_MATCHING = 3;

/** The units that answer a focused question, those of sources of the matching feedback kind first. */
export function focusedUnits(focus: Focus, units: Unit[], rows: Pick<RetrievedRow, "id" | "feedbackKind">[], model: AspectModel): Unit[] {
  const kindOf = new Map(rows.map((r) => [r.id, r.feedbackKind]));
  const asked = units.filter((u) => matches(focus, u, model, kindOf.get(u.contentId) ?? null));
  if (focus.feedbackKinds.length === 0) return asked;
  const fitting = asked.filter((u) => focus.feedbackKinds.includes(kindOf.get(u.contentId) ?? ""));
  return fitting.length >= MIN_MATCHING ? fitting : asked;
}

/**
 * How clearly each analysed source is of the feedback kind a focused question asks for: the stored
 * kind's confidence (0–1; 0 when it was stored without one) when it is one of the asked kinds, -1 for
 * a source of another kind or none yet. Undefined when the question asks for no feedback kind (churn,
 * comparisons, onboarding).
 */
export function kindFit(
  focus: Focus,
  rows: Pick<RetrievedRow, "id" | "feedbackKind" | "feedbackKindConfidence">[],
): Map<string, number> | undefined {
  if (focus.feedbackKinds.length === 0) return undefined;
  return new Map(
    rows.map((r) => [r.id, r.feedbackKind && focus.feedbackKinds.includes(r.feedbackKind) ? (r.feedbackKindConfidence ?? 0) : -1]),
  );
}
