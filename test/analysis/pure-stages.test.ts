import { describe, expect, it } from "vitest";
import {
  checkQuotes,
  type QuoteCandidate,
  type QuoteOriginal,
  type QuoteOriginals,
  type VerifiedQuote,
} from "../../src/insights/analysis/evidence.js";
import { findThemes } from "../../src/insights/analysis/findings.js";
import { focusOf, kindFit } from "../../src/insights/analysis/focus.js";
import { questionIntent } from "../../src/insights/analysis/question.js";
import { finalOutput, withProse } from "../../src/insights/analysis/result.js";
import { assemble, draftQuotes, extractiveInsights, type InsightDraft } from "../../src/insights/analysis/synthesis.js";
import { countOverScope, type Theme } from "../../src/insights/analysis/themes.js";
import { phraseEmbedder } from "../../src/insights/analysis/topics/embedder.js";
import { type StoredUnit, scoreUnits, unitsOf } from "../../src/insights/analysis/units.js";
import { ANALYSER_VERSION, opinionUnits, sliceCodePoints } from "../../src/insights/enrichment/opinions.js";

/**
 * The engine's stages on plain inputs, no database: the reads happen before and between them
 * (src/insights/analysis/load.ts, scope-counts.ts), so each stage is data in, data out.
 */
const id = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, "0")}`;
const WORKSPACE = id(900);

/** What enrichment stores for a content's units: the spans of `opinionUnits`, under ids, by analyser version. */
function storedOf(contentId: string, content: string, version: number, n0: number): StoredUnit[] {
  return opinionUnits(content).map(({ start, end, label, ...span }, i) => ({
    ...span,
    id: id(n0 + i),
    contentId,
    startOffset: start,
    endOffset: end,
    sentimentLabel: label,
    analyserVersion: version,
  }));
}

describe("units stage", () => {
  const current = { id: id(1), content: "Sync keeps failing on my phone. The editor is lovely though." };
  const older = { id: id(2), content: "The price went up again, but support answered within an hour." };
  const fresh = { id: id(3), content: "Please add a web clipper for Chrome." };

  it("uses the stored units of the current analyser as stored, in text order, whatever order they come in", () => {
    const stored = storedOf(current.id, current.content, ANALYSER_VERSION, 100).map((u) => ({ ...u, aspect: "stored aspect" }));
    const { units, computed } = unitsOf([current], [...stored].reverse());
    expect(computed).toBe(0);
    expect(units.map((u) => [u.id, u.start, u.aspect])).toEqual(stored.map((u) => [u.id, u.startOffset, "stored aspect"]));
    expect(units.every((u) => u.contentId === current.id)).toBe(true);
  });

  it("recomputes the units of an older analyser, keeping the ids of equal spans, and computes and counts unenriched rows", () => {
    const [first, second] = storedOf(older.id, older.content, ANALYSER_VERSION - 1, 200);
    // The second stored unit's span no longer matches what the analyser finds: its id is not kept.
    const moved = { ...second!, startOffset: second!.startOffset + 1, aspect: "stale" };
    const { units, computed } = unitsOf([older, fresh], [{ ...first!, aspect: "stale" }, moved]);
    const recomputed = opinionUnits(older.content);
    const mine = units.filter((u) => u.contentId === older.id);
    expect(mine.map((u) => [u.start, u.end, u.aspect])).toEqual(recomputed.map((u) => [u.start, u.end, u.aspect]));
    expect(mine.map((u) => u.id)).toEqual([first!.id, ...recomputed.slice(1).map(() => null)]);
    // The unenriched row is computed from its content and counted; the older one is not counted.
    expect(computed).toBe(1);
    expect(units.filter((u) => u.contentId === fresh.id).map((u) => u.kind)).toEqual(["request"]);
    // Row order is kept: every unit of the first row before the second's.
    expect(units.map((u) => u.contentId)).toEqual([...mine.map(() => older.id), fresh.id]);
  });

  it("scores units by question words, row rank and strength", () => {
    const { units } = unitsOf([current, fresh], []);
    const scored = scoreUnits(units, [current, fresh], "How is sync?");
    const sync = scored.find((u) => u.text.startsWith("Sync"))!;
    const clipper = scored.find((u) => u.contentId === fresh.id)!;
    expect(sync.relevance).toBeGreaterThan(clipper.relevance);
    expect(scored.map((u) => u.text)).toEqual(units.map((u) => u.text));
  });
});

const original = (n: number, content: string, more: Partial<QuoteOriginal> = {}): QuoteOriginal => ({
  id: id(n),
  content,
  url: `https://example.com/${n}`,
  platform: "reddit",
  author: `author${n}`,
  publishedAt: new Date("2026-11-01T10:00:00Z"),
  kind: "post",
  metadata: {},
  workspaceId: WORKSPACE,
  entityId: id(800),
  feedbackKind: "complaint",
  ...more,
});

describe("quote check", () => {
  const emoji = original(10, "🚀🚀 The new pricing page 🎉 looks clean. The new pricing page 🎉 looks clean.");
  const summary = original(11, "A summary of what everyone said in the meeting.", { kind: "summary" });
  const foreign = original(12, "Globex pricing is private to Globex.", { workspaceId: id(901) });
  const originals: QuoteOriginals = {
    rows: new Map([emoji, summary, foreign].map((r) => [r.id, r])),
    units: new Map([
      [id(20), { id: id(20), contentId: emoji.id, startOffset: 0, endOffset: 40 }],
      [id(21), { id: id(21), contentId: emoji.id, startOffset: 50, endOffset: 60 }],
    ]),
  };
  const QUOTE = "The new pricing page 🎉 looks clean.";

  it("keeps verbatim quotes with code-point offsets and drops everything else, saying why", () => {
    const candidates: QuoteCandidate[] = [
      { content_id: emoji.id, quote: QUOTE, opinion_unit_id: id(20) },
      // Claimed offsets that hold are kept: the second occurrence.
      { content_id: emoji.id, quote: QUOTE, start_offset: 39, end_offset: 74, opinion_unit_id: id(21) },
      // Claimed offsets that do not hold are recomputed: the first occurrence, already kept once.
      { content_id: emoji.id, quote: QUOTE, start_offset: 1, end_offset: 5 },
      { content_id: emoji.id, quote: "The new pricing page looks clean." },
      { content_id: summary.id, quote: "A summary of what everyone said" },
      { content_id: foreign.id, quote: "Globex pricing is private" },
      { content_id: emoji.id, quote: " 🎉 " },
      { content_id: id(13), quote: "an original nobody stored" },
      { content_id: "not-a-uuid", quote: "anything at all here" },
    ];
    const { kept, dropped } = checkQuotes(candidates, originals, { workspaceIds: [WORKSPACE] });
    expect(kept.map((k) => [k.start_offset, k.end_offset, k.opinion_unit_id])).toEqual([
      [3, 38, id(20)],
      [39, 74, null],
    ]);
    for (const k of kept) expect(sliceCodePoints(emoji.content, k.start_offset, k.end_offset)).toBe(k.quote);
    expect(kept[0]).toMatchObject({
      content_id: emoji.id,
      url: emoji.url,
      platform: "reddit",
      author: "author10",
      published_at: "2026-11-01T10:00:00.000Z",
      feedback_kind: "complaint",
      entity_id: id(800),
    });
    expect(dropped.map((d) => d.reason)).toEqual([
      "not_verbatim",
      "not_quotable",
      "out_of_scope",
      "empty",
      "not_stored_original",
      "not_stored_original",
    ]);
    expect(dropped[0]!.candidate).toBe(candidates[3]);
  });

  it("applies the caller's shortest quote", () => {
    const candidate = { content_id: emoji.id, quote: "pricing" };
    expect(checkQuotes([candidate], originals, { workspaceIds: [WORKSPACE] }).dropped[0]?.reason).toBe("empty");
    expect(checkQuotes([candidate], originals, { workspaceIds: [WORKSPACE], minQuoteChars: 1 }).kept).toHaveLength(1);
  });
});

const verified = (n: number, quote: string, start: number): VerifiedQuote => ({
  content_id: id(n),
  quote,
  start_offset: start,
  end_offset: start + quote.length,
  opinion_unit_id: null,
  url: `https://example.com/${n}`,
  platform: n % 2 === 0 ? "reddit" : "github",
  author: `author${n}`,
  published_at: null,
  feedback_kind: null,
  entity_id: id(800),
});

describe("assemble", () => {
  const a = verified(30, "Sync keeps failing on my phone.", 0);
  const b = verified(31, "Sync took 20 minutes this morning.", 4);
  const c = verified(32, "The editor is lovely to write in.", 0);
  const candidate = (v: VerifiedQuote): QuoteCandidate => ({ content_id: v.content_id, quote: v.quote });
  const drafts: InsightDraft[] = [
    {
      title: "Sync — complaints (5 sources)",
      summary: "s",
      sentiment: "negative",
      confidence: 0.6,
      evidence: [candidate(a), { content_id: id(33), quote: "invented" }, candidate(b)],
      aspect: "sync",
      polarity: "complaint",
      sources: 5,
      sourcesAnalysed: 2,
      counts: { complaint: 5, praise: 0, request: 0, neutral: 0 },
    },
    { title: "Nothing verified", summary: "s", sentiment: "neutral", confidence: 0.3, evidence: [{ content_id: id(34), quote: "x" }] },
    { title: "Model insight", summary: "s", sentiment: "mixed", confidence: 0.5, evidence: [candidate(c), candidate(b)] },
  ];

  it("numbers verified quotes in order of first use, shares a number between insights and drops insights left without evidence", () => {
    expect(draftQuotes(drafts)).toHaveLength(6);
    const verification = { kept: [a, b, c], dropped: [{ candidate: drafts[0]!.evidence[1]!, reason: "not_verbatim" as const }] };
    const out = assemble(drafts, verification);
    expect(out.insights.map((i) => [i.title, i.evidence.map((e) => e.number)])).toEqual([
      ["Sync — complaints (5 sources)", [1, 2]],
      ["Model insight", [3, 2]],
    ]);
    expect(out.citations).toEqual([
      { number: 1, content_id: a.content_id, quote: a.quote },
      { number: 2, content_id: b.content_id, quote: b.quote },
      { number: 3, content_id: c.content_id, quote: c.quote },
    ]);
    expect(out.evidence[0]).not.toHaveProperty("entity_id");
    const [sync, model] = out.insights;
    expect(sync).toMatchObject({ aspect: "sync", polarity: "complaint", sources: 5, sources_analysed: 2 });
    expect(sync).not.toHaveProperty("sourcesAnalysed");
    // An insight without engine fields takes them from its sentiment and its evidence.
    expect(model).toMatchObject({ aspect: null, polarity: "mixed", sources: 2 });
    expect(out.dropped).toBe(1);
    expect(out.verified).toEqual([a, b, c]);
  });

  it("the result: prose of the model over it, status by cited sources", () => {
    const out = assemble(drafts, { kept: [a, b, c], dropped: [] });
    const written = withProse(out, "extractive answer", {
      ok: true,
      answer: null,
      summaries: ["the model's summary", null],
      removed: { citations: 1, quotes: 2 },
    });
    expect(written.engine).toBe("llm");
    expect(written.answer).toBe("extractive answer");
    expect(written.assembled.insights.map((i) => i.summary)).toEqual(["the model's summary", "s"]);
    expect(written.limitations).toHaveLength(3);
    expect(withProse(out, "extractive answer", { ok: false, reason: "timeout" })).toMatchObject({
      engine: "extractive",
      assembled: out,
      limitations: ["The language model was not used: timeout; the answer is extractive."],
    });
    const result = finalOutput({}, ["before"], written, { inScope: { reddit: 10, github: 3 }, analysed: [{ platform: "reddit" }] });
    expect(result.status).toBe("completed");
    expect(result.data.limitations).toEqual(["before"]);
    expect(result.data.coverage).toEqual({
      reddit: { in_scope: 10, retrieved: 1, cited: 2 },
      github: { in_scope: 3, retrieved: 0, cited: 1 },
    });
    expect(result.entityOf.get(a.content_id)).toBe(id(800));
    const lone = finalOutput(
      {},
      [],
      { ...written, assembled: assemble([drafts[0]!], { kept: [a], dropped: [] }) },
      {
        inScope: {},
        analysed: [],
      },
    );
    expect(lone.status).toBe("partial");
    expect(lone.data.limitations).toEqual(["Only 1 source supports the answer; treat it as anecdotal."]);
  });
});

describe("themes stage", () => {
  const posts = [
    "Sync keeps failing on my phone.",
    "Sync took 20 minutes this morning.",
    "The editor is lovely to write in.",
    "Ten dollars a month is too expensive.",
  ];
  const rows = posts.map((content, i) => ({ id: id(40 + i), title: "", content, feedbackKind: null }));
  const units = scoreUnits(unitsOf(rows, []).units, rows, "What do people think?");

  it("finds the reported themes from units alone, and says when a focused question finds nothing to answer", () => {
    const intent = questionIntent("What do people think?", ["Acme"]);
    const found = findThemes(
      units,
      rows,
      { intent, focus: focusOf(intent), entityNames: ["Acme"] },
      {
        insights: 6,
        coverageCap: null,
        coverageMin: 1,
      },
      phraseEmbedder(),
    );
    expect(found.answered && found.reported.map((t) => `${t.aspect}/${t.polarity}/${t.sources}`)).toEqual([
      "sync/complaint/2",
      "pricing/complaint/1",
      "editor/praise/1",
    ]);
    const requests = questionIntent("Which features do users request most?", ["Acme"]);
    expect(
      findThemes(
        units,
        rows,
        { intent: requests, focus: focusOf(requests), entityNames: ["Acme"] },
        {
          insights: 6,
          coverageCap: null,
          coverageMin: 1,
        },
        phraseEmbedder(),
      ),
    ).toEqual({ answered: false, noun: "feature requests" });
  });

  it("counts over the scope are a floor-kept merge: the sample's count stays a floor and is kept as analysed", () => {
    const intent = questionIntent("What do people think?", ["Acme"]);
    const found = findThemes(
      units,
      rows,
      { intent, focus: null, entityNames: ["Acme"] },
      { insights: 6, coverageCap: null, coverageMin: 1 },
      phraseEmbedder(),
    );
    if (!found.answered) throw new Error("no themes");
    const [sync, pricing] = found.reported as [Theme, Theme, Theme];
    const counted = countOverScope(found.reported, new Map([[0, { complaint: 7, praise: 1, request: 0, neutral: 3 }]]));
    expect(counted[0]).toMatchObject({ sources: 7, analysed: 2, counts: { complaint: 7, praise: 1, request: 0, neutral: 3 } });
    expect(counted[1]).toBe(pricing);
    const below = countOverScope([sync], new Map([[0, { complaint: 1, praise: 0, request: 0, neutral: 0 }]]));
    expect(below[0]).toMatchObject({ sources: 2, analysed: 2, counts: { complaint: 2 } });
  });

  it("a focused question quotes the sources most clearly of the asked feedback kind first", () => {
    const reports = [
      { content: "Sync keeps crashing when I open a large vault.", feedbackKind: "bug_report", feedbackKindConfidence: 0.41 },
      { content: "Sync keeps crashing after the last update.", feedbackKind: "bug_report", feedbackKindConfidence: 0.93 },
      { content: "Sync keeps crashing, how do I get my notes back?", feedbackKind: "question", feedbackKindConfidence: 0.88 },
      { content: "Sync keeps crashing on every start.", feedbackKind: "bug_report", feedbackKindConfidence: null },
      { content: "Sync keeps crashing on my tablet.", feedbackKind: "bug_report", feedbackKindConfidence: 0.67 },
    ].map((r, i) => ({ ...r, id: id(60 + i), title: "", platform: "github" }));
    const bugs = questionIntent("What bugs do users report most?", ["Acme"]);
    const focus = focusOf(bugs)!;
    const mine = scoreUnits(unitsOf(reports, []).units, reports, "What bugs do users report most?");
    const found = findThemes(
      mine,
      reports,
      { intent: bugs, focus, entityNames: ["Acme"] },
      { insights: 6, coverageCap: null, coverageMin: 1 },
      phraseEmbedder(),
    );
    if (!found.answered) throw new Error("no themes");
    const fit = kindFit(focus, reports)!;
    expect([...fit.values()]).toEqual([0.41, 0.93, -1, 0, 0.67]);
    const quoted = (fitOf?: Map<string, number>) =>
      extractiveInsights(
        found.reported,
        new Map(reports.map((r) => [r.id, r.platform])),
        new Map(reports.map((r) => [r.id, r.content])),
        5,
        fitOf,
      )[0]!.evidence.map((e) => e.content_id);
    // The bug reports by their kind's confidence, one without a stored confidence after them; the
    // question is not quoted at all, as its units are not from a source of the asked kind.
    expect(quoted(fit)).toEqual([id(61), id(64), id(60), id(63)]);
    // Without the fit, the order is the units' own (strength, relevance, then id).
    expect(quoted().slice().sort()).toEqual([id(60), id(61), id(63), id(64)]);
    // A question that asks for no feedback kind has no fit.
    const churn = questionIntent("Why do users give up or switch?", ["Acme"]);
    expect(kindFit(focusOf(churn)!, reports)).toBeUndefined();
  });
});
