import { aspectLabel } from "./aspect-mining.js";
import type { QuestionIntent } from "./question.js";
import type { InsightItem } from "./schemas.js";
import { nameOf } from "./synthesis.js";
import { plural } from "./text.js";
import { isGeneral, isSplit } from "./themes.js";

/**
 * The extractive answer: it answers what was asked. Aspects the question names come
 * first; then complaints, praise and feature requests, in the order the question asks
 * for them (a question about complaints leads with complaints, one about praise with
 * praise). An aspect that is split appears among both, marked so. Every claim cites its
 * quotes ([n]); every count is of distinct sources, never of people.
 */
export const MAX_LISTED = 8;

type Section = "complaint" | "praise" | "request" | "neutral";

const nameOfInsight = (i: InsightItem) => (i.aspect ? nameOf({ label: aspectLabel(i.aspect) }) : i.title);
const cite = (i: InsightItem) => i.evidence.map((e) => `[${e.number}]`).join("");
const countOf = (i: InsightItem) => `${plural(i.sources, "source")}${i.counts && isSplit(i.counts) ? ", split" : ""}`;

/** ", 31 report problems, 11 ask for more": what a topic's sources say, largest side first. */
function sidesOf(i: InsightItem): string {
  const c = i.counts;
  if (!c) return "";
  const parts: [number, string][] = [
    [c.complaint, `${c.complaint} ${c.complaint === 1 ? "reports a problem" : "report problems"}`],
    [c.request, `${c.request} ${c.request === 1 ? "asks" : "ask"} for more`],
    [c.praise, `${c.praise} ${c.praise === 1 ? "praises" : "praise"} it`],
  ];
  const said = parts.filter(([n]) => n > 0).sort((a, b) => b[0] - a[0]);
  return said.length === 0 ? "" : `: ${said.map(([, t]) => t).join(", ")}`;
}

function list(items: InsightItem[]): string {
  const shown = items.slice(0, MAX_LISTED).map((i) => `${nameOfInsight(i)} (${countOf(i)}) ${cite(i)}`);
  if (items.length > MAX_LISTED) shown.push(`${items.length - MAX_LISTED} more (see the insights)`);
  return shown.length === 1 ? shown[0]! : `${shown.slice(0, -1).join(", ")} and ${shown.at(-1)}`;
}

/** How a focused question's answer introduces each side (focus.ts chose the statements). */
const ASKED_LEAD: Record<NonNullable<QuestionIntent["ask"]>, Partial<Record<Section, string>>> = {
  requests: { request: "Most requested: ", complaint: "Complaints that come with the requests: " },
  bugs: { complaint: "Most reported bugs: ", praise: "Praised in the same reports: " },
  churn: { complaint: "Reasons given for leaving or switching: ", praise: "Said in favour while leaving: " },
  comparison: { complaint: "Where alternatives come out ahead: ", praise: "Where it comes out ahead of alternatives: " },
  updates: { complaint: "Problems since an update: ", praise: "Praised in the same reports: " },
  onboarding: { complaint: "Getting started, complaints: ", praise: "Getting started, praised: " },
};

function sectionOrder(intent: QuestionIntent): Section[] {
  if (intent.ask === "requests") return ["request", "complaint", "praise", "neutral"];
  if (intent.ask === "comparison") return ["praise", "complaint", "request", "neutral"];
  if (intent.requests && !intent.complaints && !intent.praise) return ["request", "complaint", "praise", "neutral"];
  if (intent.praise && !intent.complaints) return ["praise", "complaint", "request", "neutral"];
  return ["complaint", "praise", "request", "neutral"];
}

function focusSentence(items: InsightItem[]): string {
  const name = nameOfInsight(items[0]!);
  const said = items.map((i) => {
    const n = plural(i.sources, "source");
    switch (i.polarity) {
      case "complaint":
        return `${n} ${i.sources === 1 ? "complains" : "complain"} ${cite(i)}`;
      case "praise":
        return `${n} ${i.sources === 1 ? "praises" : "praise"} it ${cite(i)}`;
      case "mixed":
        return `${n} ${i.sources === 1 ? "is" : "are"} divided ${cite(i)}`;
      case "request":
        return `${n} ${i.sources === 1 ? "asks" : "ask"} for more ${cite(i)}`;
      default:
        return `${n} ${i.sources === 1 ? "mentions" : "mention"} it without a clear opinion ${cite(i)}`;
    }
  });
  return `On ${name}, ${said.length === 1 ? said[0] : `${said.slice(0, -1).join(", ")} and ${said.at(-1)}`}.`;
}

export function extractiveAnswer(
  intent: QuestionIntent,
  insights: InsightItem[],
  focus: string[],
  sourcesAnalysed: number,
  storedInScope = sourcesAnalysed,
  instead?: string,
): string {
  if (insights.length === 0) return "The stored evidence in scope does not answer this question.";
  const parts: string[] = [];
  if (instead) {
    const analysed = plural(sourcesAnalysed, "analysed source");
    parts.push(`None of the ${analysed} gives ${instead}.`);
    parts.push(`The nearest signals: ${list(insights)}.`);
    parts.push(`Counts are distinct sources, out of ${analysed}.`);
    return parts.join(" ");
  }
  const focused = insights.filter((i) => i.aspect !== null && focus.includes(i.aspect));
  for (const aspect of [...new Set(focused.map((i) => i.aspect))].slice(0, 4))
    parts.push(focusSentence(focused.filter((i) => i.aspect === aspect)));
  const rest = insights.filter((i) => !focused.includes(i));
  const analysed = plural(sourcesAnalysed, "analysed source");
  // A general question is answered topic by topic, each with what its sources say.
  if (isGeneral(intent) && rest.length > 0) {
    const topics = rest.slice(0, MAX_LISTED).map((i) => `${nameOfInsight(i)} (${plural(i.sources, "source")}${sidesOf(i)}) ${cite(i)}`);
    if (rest.length > MAX_LISTED) topics.push(`${rest.length - MAX_LISTED} more (see the insights)`);
    parts.push(`${parts.length === 0 ? "The topics the sources raise most" : "Other topics"}: ${topics.join("; ")}.`);
    parts.push(`Counts are distinct sources, out of ${analysed}.`);
    return parts.join(" ");
  }

  for (const section of sectionOrder(intent)) {
    const first = parts.length === 0;
    const askedLead = intent.ask ? ASKED_LEAD[intent.ask][section] : undefined;
    const items = rest.filter((i) => i.polarity === section || (i.polarity === "mixed" && section === "complaint"));
    if (items.length === 0) {
      const asked =
        section === "complaint" ? intent.complaints && !intent.praise : section === "praise" && intent.praise && !intent.complaints;
      if (first && asked) parts.push(`None of the ${analysed} ${section === "complaint" ? "voices a complaint" : "praises anything"}.`);
      continue;
    }
    if (askedLead) parts.push(`${askedLead}${list(items)}.`);
    else if (section === "complaint")
      parts.push(first ? `The biggest complaints are about ${list(items)}.` : `Complaints: ${list(items)}.`);
    else if (section === "praise") parts.push(first ? `Most praised: ${list(items)}.` : `Praised: ${list(items)}.`);
    else if (section === "request") parts.push(`Feature requests: ${list(items)}.`);
    else parts.push(`Also mentioned, without a clear opinion: ${list(items)}.`);
  }
  if (storedInScope > sourcesAnalysed && insights.some((i) => i.sources_analysed !== undefined))
    parts.push(`Counts are distinct sources among the ${plural(storedInScope, "stored source")} in scope; quotes come from ${analysed}.`);
  else parts.push(`Counts are distinct sources, out of ${analysed}.`);
  return parts.join(" ");
}
