import { describe, expect, it } from "vitest";
import { extractiveAnswer } from "../../src/insights/analysis/answer.js";
import { questionIntent } from "../../src/insights/analysis/question.js";
import type { InsightItem } from "../../src/insights/analysis/schemas.js";
import { extractiveInsights } from "../../src/insights/analysis/synthesis.js";
import { buildThemes, isSplit, selectThemes, type Theme } from "../../src/insights/analysis/themes.js";
import { topicAspects } from "../../src/insights/analysis/topics/aspects.js";
import { phraseEmbedder } from "../../src/insights/analysis/topics/embedder.js";
import type { Unit } from "../../src/insights/analysis/units.js";
import { opinionUnits } from "../../src/insights/enrichment/opinions.js";

/**
 * Aspects across a corpus, theme polarity by distinct sources, which themes are
 * reported, and the answer's order: pure functions, no database.
 */
function unitsOf(posts: string[]): Unit[] {
  return posts.flatMap((content, i) =>
    opinionUnits(content).map((u) => ({ ...u, id: null, contentId: `post-${String(i).padStart(2, "0")}`, relevance: 0 })),
  );
}

function themesOf(posts: string[], question = "What do people think?", entity = "Acme") {
  const units = unitsOf(posts);
  const intent = questionIntent(question, [entity]);
  const titles = new Map(posts.map((_, i) => [`post-${String(i).padStart(2, "0")}`, ""]));
  const model = topicAspects(units, titles, [entity], phraseEmbedder(), true);
  return { themes: buildThemes(units, model, intent), intent, model };
}

const summary = (t: Theme) => `${t.aspect}/${t.polarity}/${t.sources}`;

describe("aspect grouping", () => {
  it("groups every way of naming the price into one pricing theme, and crashes and freezes into stability", () => {
    const { themes } = themesOf([
      "The price went up again.",
      "$12 a month is a lot for a todo list, too expensive.",
      "Twenty dollars per seat is overpriced.",
      "Acme keeps crashing on launch.",
      "It freezes whenever I attach a photo.",
      "Another crash today, lost my list.",
    ]);
    expect(themes.map(summary).sort()).toEqual(["pricing/complaint/3", "stability/complaint/3"]);
  });

  it("names topics after the phrase people use, grouping phrases that mean the same; a word only said as a tail names none", () => {
    const { themes } = themesOf([
      "The markdown shortcuts are brilliant.",
      "Keyboard shortcuts are great.",
      "Shortcuts make me fast, love them.",
      "Dark mode looks great.",
      "The reading mode is lovely.",
    ]);
    const aspects = themes.map((t) => t.aspect);
    expect(themes.find((t) => t.aspect === "shortcuts")).toMatchObject({ polarity: "praise", sources: 3 });
    // "mode" is never said alone, so dark mode and reading mode stay apart (no "Mode" theme).
    expect(aspects).toEqual(expect.arrayContaining(["dark mode", "reading mode"]));
    expect(aspects).not.toContain("mode");
  });

  it("never names a theme after the tracked entity", () => {
    const { themes } = themesOf(
      ["Acme Notes is wonderful.", "I keep my recipes in Acme Notes.", "Acme Notes sync is broken.", "The Acme Notes widget is broken."],
      "What do people think?",
      "Acme Notes",
    );
    expect(themes.map(summary)).toEqual(expect.arrayContaining(["sync/complaint/1", "widget/complaint/1"]));
    for (const t of themes) expect(t.aspect).not.toMatch(/acme|note/);
  });
});

describe("theme polarity", () => {
  it("puts each side of an aspect in its own theme, counting distinct sources, and says when the aspect is split", () => {
    const { themes } = themesOf([
      "Sync fails. Sync is slow. Sync loses my edits.",
      "Sync is fantastic, never had an issue.",
      "Sync works great for me.",
    ]);
    const counts = { complaint: 1, praise: 2, neutral: 0, request: 0 };
    expect(themes.map(summary)).toEqual(["sync/praise/2", "sync/complaint/1"]);
    for (const t of themes) expect(t.counts).toEqual(counts);
    expect(isSplit(counts)).toBe(true);
  });

  it("quotes sources of one mind first: a praise from a source that also complains comes after a clear-cut one", () => {
    const posts = ["The battery is amazing. The screen is terrible.", "The battery is decent.", "The screen is fine."];
    const { themes } = themesOf(posts);
    const battery = themes.find((t) => t.aspect === "battery" && t.polarity === "praise");
    expect(battery?.sources).toBe(2);
    expect(battery?.conflicted).toEqual(["post-00"]);
    const contentOf = new Map(posts.map((p, i) => [`post-${String(i).padStart(2, "0")}`, p]));
    const platformOf = new Map([...contentOf.keys()].map((id) => [id, "reddit"]));
    const [insight] = extractiveInsights([battery as Theme], platformOf, contentOf, 2);
    // "amazing" is the stronger word, but its source also complains about the screen.
    expect(insight?.evidence.map((e) => e.content_id)).toEqual(["post-01", "post-00"]);
  });

  it("calls an aspect split only when neither side is a small minority", () => {
    expect(isSplit({ complaint: 3, praise: 1, neutral: 0, request: 0 })).toBe(false);
    expect(isSplit({ complaint: 2, praise: 1, neutral: 0, request: 0 })).toBe(true);
    expect(isSplit({ complaint: 0, praise: 2, neutral: 5, request: 0 })).toBe(false);
  });

  it("keeps feature requests apart from opinions about the same aspect; neutral mentions only make a theme when nobody judges", () => {
    const { themes } = themesOf([
      "Search is slow.",
      "Search misses half my notes.",
      "Please add search inside PDFs.",
      "I use search daily.",
    ]);
    // "Search is slow" is about performance (a general aspect before a common word), the request about PDFs.
    expect(themes.map(summary)).toEqual(["performance/complaint/1", "search/complaint/1", "pdfs/request/1"]);
    expect(themes.find((t) => t.aspect === "search")!.counts).toEqual({ complaint: 1, praise: 0, neutral: 1, request: 0 });
    expect(themesOf(["I use search daily.", "Search is where I start."]).themes.map(summary)).toEqual(["search/neutral/2"]);
  });
});

describe("which themes are reported", () => {
  const posts = [
    "Sync fails daily.",
    "Sync is broken again.",
    "Sync lost my notes.",
    "The editor is lovely.",
    "Support was helpful.",
    "Please add a web clipper.",
  ];

  it("ranks by distinct sources; a question about complaints and praise gets both even when only three fit", () => {
    const { themes, intent } = themesOf(posts, "What are the biggest complaints and what do people like?");
    expect(themes[0]).toMatchObject({ aspect: "sync", sources: 3 });
    const picked = selectThemes(themes, intent, 2);
    expect(picked.map((t) => t.polarity)).toEqual(["complaint", "praise"]);
  });

  it("with coverage, reports every theme enough sources talk about, up to the cap", () => {
    const { themes, intent } = themesOf(posts);
    expect(selectThemes(themes, intent, 2, { minSources: 1, cap: 30 })).toHaveLength(themes.length);
    expect(selectThemes(themes, intent, 2, { minSources: 2, cap: 30 }).map((t) => t.aspect)).toEqual(["sync", themes[1]!.aspect]);
    expect(selectThemes(themes, intent, 2, { minSources: 1, cap: 3 })).toHaveLength(3);
  });

  it("puts the aspect a question names first", () => {
    const { themes } = themesOf(posts, "How is the web clipper?");
    expect(themes[0]).toMatchObject({ aspect: "web clipper", focus: true });
  });
});

describe("question intent", () => {
  it.each([
    ["What are the biggest complaints about Acme Notes?", { complaints: true, praise: false, requests: false }],
    ["What do people love about it?", { complaints: false, praise: true, requests: false }],
    ["What are the biggest complaints about Acme Notes and what do people like?", { complaints: true, praise: true, requests: false }],
    ["Which features are users asking for?", { complaints: false, praise: false, requests: true }],
    ["What do users think about Acme?", { complaints: true, praise: true, requests: true }],
  ])("%s", (question, expected) => {
    expect(questionIntent(question, ["Acme Notes"])).toMatchObject(expected);
  });

  it("finds the aspects a question names, in any wording", () => {
    expect(questionIntent("Is it too expensive?").aspects).toEqual(["pricing"]);
    expect(questionIntent("How do people feel about onboarding and support?").aspects).toEqual(["onboarding", "support"]);
    expect(questionIntent("Is the dashboard liked?").topicTerms).toEqual(["dashboard"]);
  });
});

describe("the answer", () => {
  const insight = (
    aspect: string,
    polarity: InsightItem["polarity"],
    sources: number,
    numbers: number[],
    counts: Partial<InsightItem["counts"]> = {},
  ): InsightItem => ({
    title: aspect,
    summary: "",
    sentiment: "neutral",
    confidence: 0.5,
    aspect,
    polarity,
    sources,
    counts: { complaint: 0, praise: 0, neutral: 0, request: 0, ...counts },
    evidence: numbers.map((number) => ({
      number,
      content_id: `c${number}`,
      quote: "q",
      feedback_kind: null,
      url: "",
      platform: "web",
      author: "",
      published_at: null,
      start_offset: 0,
      end_offset: 1,
      opinion_unit_id: null,
    })),
  });
  const insights = [
    insight("sync", "complaint", 3, [1, 2], { complaint: 3 }),
    insight("pricing", "complaint", 2, [3], { complaint: 2, praise: 2 }),
    insight("pricing", "praise", 2, [4], { complaint: 2, praise: 2 }),
    insight("editor", "praise", 1, [5], { praise: 1 }),
    insight("web clipper", "request", 1, [6], { request: 1 }),
  ];

  it("leads with complaints for a question about complaints, citing each claim, counting sources", () => {
    const answer = extractiveAnswer(questionIntent("What are the biggest complaints?"), insights, [], 12);
    expect(answer).toBe(
      "The biggest complaints are about sync (3 sources) [1][2] and pricing (2 sources, split) [3]. " +
        "Praised: pricing (2 sources, split) [4] and editor (1 source) [5]. Feature requests: web clipper (1 source) [6]. " +
        "Counts are distinct sources, out of 12 analysed sources.",
    );
  });

  it("leads with praise for a question about praise, and with the aspect a question names", () => {
    expect(extractiveAnswer(questionIntent("What do people love?"), insights, [], 12)).toMatch(
      /^Most praised: pricing \(2 sources, split\) \[4\] and editor/,
    );
    expect(extractiveAnswer(questionIntent("How is pricing?"), insights, ["pricing"], 12)).toMatch(
      /^On pricing, 2 sources complain \[3\] and 2 sources praise it \[4\]\. Complaints: sync \(3 sources\) \[1\]\[2\]\. Praised: editor/,
    );
  });

  it("says so when nothing answers what was asked", () => {
    expect(extractiveAnswer(questionIntent("What are the complaints?"), [insights[3]!], [], 5)).toMatch(
      /^None of the 5 analysed sources voices a complaint\. Praised:/,
    );
  });
});
