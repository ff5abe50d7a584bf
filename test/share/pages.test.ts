import { parseHTML } from "linkedom";
import { describe, expect, it, vi } from "vitest";
import { escapeHtml, formatDateTime, formatNumber, html, raw, safeHref } from "../../src/delivery/share/pages/html.js";
import {
  type AnalysisPageModel,
  type EntityPageModel,
  type KnowledgePageModel,
  LIVE_SCRIPT,
  LIVE_SCRIPT_SRC,
  renderAnalysisPage,
  renderEntityPage,
  renderKnowledgePage,
  renderNotFoundPage,
  renderThemeSourcesPage,
  STYLESHEET,
  STYLESHEET_HASH,
  STYLESHEET_HREF,
  type ThemeSourcesPageModel,
} from "../../src/delivery/share/pages/index.js";
import type { AnalysisRecord, EvidenceItem, InsightItem } from "../../src/insights/analysis/schemas.js";
import type { ThemeSourceItem } from "../../src/insights/analysis/theme-sources-schemas.js";
import type { IntelligenceSummary } from "../../src/insights/intelligence/schemas.js";
import type { InsightRecord } from "../../src/insights/knowledge/schemas.js";

/**
 * The shared pages' HTML, parsed with a real HTML parser: escaping, unique ids that citation links
 * land on, no inline style or script (the pages' CSP forbids both), one h1 and headings in order,
 * accessible charts, the live region only while an analysis runs, and a not-found page that says
 * nothing about the link. test/share/browser.test.ts opens the same pages in a browser.
 */

const frame = { expiresAt: "2026-12-03T09:15:00.000Z", renderedAt: "2026-11-26T09:15:42.000Z" };
const QUESTION = 'Why do users leave <script>alert("x")</script> & switch?';

const evidence = (number: number, quote: string, over: Partial<EvidenceItem> = {}): EvidenceItem => ({
  number,
  content_id: `00000000-0000-4000-8000-00000000000${number}`,
  quote,
  url: `https://example.com/post/${number}`,
  platform: "reddit",
  author: `user${number}`,
  published_at: "2026-11-20T14:03:00.000Z",
  feedback_kind: "complaint",
  start_offset: 0,
  end_offset: quote.length,
  opinion_unit_id: null,
  ...over,
});

const E1 = evidence(1, "Sync is broken again after the update, I lost two notes.");
const E2 = evidence(2, "Sync keeps failing on my phone <b>every</b> time.", { platform: "github" });
const E3 = evidence(3, "I love the editor, it is fast and clean.", { feedback_kind: "praise" });
const E4 = evidence(4, "Please add PDF export.", { url: "javascript:alert(1)", feedback_kind: "feature_request" });
const E5 = evidence(5, "Pricing went up again.", { platform: "news" });

const insight = (over: Partial<InsightItem>): InsightItem => ({
  title: "Sync — complaints (12,345 sources)",
  summary: "Sources say sync fails.",
  sentiment: "negative",
  confidence: 0.82,
  evidence: [],
  aspect: "sync",
  polarity: "complaint",
  sources: 12_345,
  counts: { complaint: 12_345, praise: 40, neutral: 3, request: 0 },
  ...over,
});

const record = (over: Partial<AnalysisRecord> = {}): AnalysisRecord => ({
  analysis_id: "6f1c2a7e-0000-4000-8000-000000000001",
  status: "completed",
  question: QUESTION,
  search_mode: "multi_source",
  platforms: ["reddit", "github", "news"],
  depth: "deep",
  entity_id: "6f1c2a7e-0000-4000-8000-0000000000e1",
  project_id: null,
  request_id: null,
  provided_sources: [],
  result: {
    status: "completed",
    data: {
      answer: "Users complain about sync [1][2] and praise the editor [3].\n\nSome ask for PDF export [4]; pricing [5]; unknown [99].",
      citations: [1, 2, 3, 4, 5].map((n) => ({ number: n, content_id: `c${n}`, quote: `q${n}` })),
      insights: [
        insight({ evidence: [E1, E2] }),
        insight({
          title: "Editor — praise (2 sources)",
          polarity: "praise",
          sentiment: "positive",
          aspect: "editor",
          sources: 2,
          counts: { complaint: 0, praise: 2, neutral: 0, request: 0 },
          evidence: [E3, E1],
        }),
        insight({ title: "PDF export requests", polarity: "request", aspect: null, sources: 2, counts: undefined, evidence: [E4] }),
      ],
      evidence: [E1, E2, E3, E4, E5],
      coverage: { reddit: { in_scope: 1_200, retrieved: 300, cited: 3 }, github: { in_scope: 40, retrieved: 40, cited: 1 } },
      limitations: ["Only public posts were read."],
      engine: "extractive",
      scope: {},
    },
  },
  error: null,
  created_at: "2026-11-26T09:00:00.000Z",
  updated_at: "2026-11-26T09:15:00.000Z",
  finished_at: "2026-11-26T09:15:00.000Z",
  events_url: "/agent/v1/analysis/x/events",
  ...over,
});

const analysisModel = (over: Partial<AnalysisRecord> = {}, eventsPath: string | null = null): AnalysisPageModel => ({
  frame,
  analysis: record(over),
  subject: "Acme Notes",
  eventsPath,
});

const parse = (page: string) => parseHTML(page).document;

/** What every page must satisfy whatever it shows. */
function expectWellFormed(page: string) {
  const doc = parse(page);
  expect(page.startsWith("<!doctype html>")).toBe(true);
  expect(doc.documentElement.getAttribute("lang")).toBe("en");
  expect(doc.querySelector('meta[name="robots"]')?.getAttribute("content")).toBe("noindex, nofollow");
  expect(doc.querySelector('meta[name="referrer"]')?.getAttribute("content")).toBe("no-referrer");
  expect(doc.querySelector('link[rel="stylesheet"]')?.getAttribute("href")).toBe(STYLESHEET_HREF);
  expect(doc.querySelectorAll("h1")).toHaveLength(1);
  // Headings never skip a level going down.
  let level = 0;
  for (const h of doc.querySelectorAll("h1, h2, h3, h4, h5, h6")) {
    const next = Number(h.tagName.slice(1));
    expect(next, h.textContent ?? "").toBeLessThanOrEqual(level + 1);
    level = next;
  }
  // The CSP allows no inline style and no inline script.
  expect(page).not.toMatch(/\sstyle\s*=/i);
  expect(doc.querySelectorAll("[style], style")).toHaveLength(0);
  for (const s of doc.querySelectorAll("script")) {
    expect(s.getAttribute("src")).toMatch(/^\/assets\//);
    expect(s.textContent).toBe("");
  }
  expect(page).not.toMatch(/\son[a-z]+\s*=/i);
  // No third-party URL except links out to sources.
  for (const el of doc.querySelectorAll("[src], link[href]")) expect(el.getAttribute("src") ?? el.getAttribute("href")).toMatch(/^\//);
  const ids = [...doc.querySelectorAll("[id]")].map((el) => el.getAttribute("id"));
  expect(new Set(ids).size).toBe(ids.length);
  for (const table of doc.querySelectorAll("table")) {
    expect(table.querySelector("caption")?.textContent?.trim()).toBeTruthy();
    for (const th of table.querySelectorAll("th")) expect(["col", "row"]).toContain(th.getAttribute("scope"));
  }
  for (const svg of doc.querySelectorAll('svg[role="img"]')) {
    const labels = (svg.getAttribute("aria-labelledby") ?? "").split(" ");
    expect(labels.length).toBeGreaterThan(0);
    for (const id of labels) expect(doc.getElementById(id)?.textContent).toBeTruthy();
    expect(svg.querySelector("title")?.textContent).toBeTruthy();
  }
  return doc;
}

describe("html", () => {
  it("escapes every interpolation that is not SafeHtml, arrays included", () => {
    expect(escapeHtml(`&<>"'`)).toBe("&amp;&lt;&gt;&quot;&#39;");
    const name = '<img src=x onerror="alert(1)">';
    expect(html`<p title="${name}">${name}</p>`.value).toBe(
      '<p title="&lt;img src=x onerror=&quot;alert(1)&quot;&gt;">&lt;img src=x onerror=&quot;alert(1)&quot;&gt;</p>',
    );
    expect(html`<ul>${["<a>", html`<li>${"&"}</li>`, [raw("<br>"), null, false, undefined, 3]]}</ul>`.value).toBe(
      "<ul>&lt;a&gt;<li>&amp;</li><br>3</ul>",
    );
  });

  it("lets only http(s) URLs and same-page fragments be links", () => {
    expect(safeHref("https://example.com/a?b=1")).toBe("https://example.com/a?b=1");
    expect(safeHref("http://example.com")).toBe("http://example.com");
    expect(safeHref("#q-3")).toBe("#q-3");
    for (const bad of [
      "javascript:alert(1)",
      " javascript:alert(1)",
      "JaVaScRiPt:alert(1)",
      "data:text/html,x",
      "//evil.com",
      "/x",
      "",
      "#",
    ])
      expect(safeHref(bad), bad).toBeNull();
  });

  it("formats dates in UTC and numbers with thousands separators", () => {
    expect(formatDateTime("2026-11-26T10:15:30+01:00")).toBe("2026-11-26 09:15 UTC");
    expect(formatDateTime("not a date")).toBe("not a date");
    expect(formatNumber(1234567)).toBe("1,234,567");
  });
});

describe("analysis page", () => {
  it("escapes the question and shows it as the one h1", () => {
    const page = renderAnalysisPage(analysisModel());
    const doc = expectWellFormed(page);
    expect(page).not.toContain("<script>alert");
    expect(page).toContain("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; switch?");
    expect(doc.querySelector("h1")?.textContent).toBe(QUESTION);
    expect(doc.querySelector("title")?.textContent).toContain(QUESTION);
    expect(page).toContain("Sync keeps failing on my phone &lt;b&gt;every&lt;/b&gt; time.");
  });

  it("links each existing citation to the one quote that carries its id", () => {
    const doc = parse(renderAnalysisPage(analysisModel()));
    const answer = doc.querySelector("#answer");
    const cites = [...(answer?.querySelectorAll('a[href^="#q-"]') ?? [])].map((a) => a.getAttribute("href"));
    expect(cites).toEqual(["#q-1", "#q-2", "#q-3", "#q-4", "#q-5"]);
    expect(answer?.textContent).toContain("unknown [99]");
    expect(answer?.querySelector('a[href="#q-99"]')).toBeNull();
    for (const n of [1, 2, 3, 4, 5]) {
      const targets = doc.querySelectorAll(`#q-${n}`);
      expect(targets, `q-${n}`).toHaveLength(1);
      expect(targets[0]?.querySelector("blockquote")?.textContent).toBe([E1, E2, E3, E4, E5][n - 1]?.quote);
    }
    // Quote 1 is shown twice (sync and editor); only its first occurrence, under sync, has the id.
    expect(doc.querySelector("#insight-1 #q-1")).not.toBeNull();
    expect(doc.querySelectorAll("#insight-2 figure")).toHaveLength(2);
    expect(doc.querySelector("#insight-2 #q-1")).toBeNull();
    // A quote no insight shows still gets a target.
    expect(doc.querySelector("#other-quotes #q-5")).not.toBeNull();
  });

  it("links quotes to their originals outside the page, but never a javascript: URL", () => {
    const page = renderAnalysisPage(analysisModel());
    const doc = parse(page);
    const original = doc.querySelector('#q-1 a[href="https://example.com/post/1"]');
    expect(original?.getAttribute("rel")).toBe("noopener noreferrer nofollow");
    expect(original?.getAttribute("target")).toBe("_blank");
    expect(doc.querySelector('a[href^="javascript"]')).toBeNull();
    expect([...doc.querySelectorAll("a")].every((a) => /^(https?:|#)/.test(a.getAttribute("href") ?? ""))).toBe(true);
    expect(doc.querySelector("#q-4 .unlinked")?.textContent).toBe("javascript:alert(1)");
  });

  it("says why a deleted citation's quote is gone, keeping its number as a link target", () => {
    const gone = evidence(5, "", { url: "", author: "", unavailable: { reason: "author_erased", at: "2026-11-26T10:00:00.000Z" } });
    const base = record();
    const data = base.result?.data as NonNullable<AnalysisRecord["result"]>["data"];
    const page = renderAnalysisPage(
      analysisModel({ result: { status: "completed", data: { ...data, evidence: [E1, E2, E3, E4, gone] } } }),
    );
    const doc = parse(page);
    expect(doc.querySelector("#q-5")?.textContent).toMatch(/asked to be forgotten \(2026-11-26\)/);
    expect(doc.querySelector('#q-5 a[href^="http"]')).toBeNull();
    expect(doc.querySelector('a[href="#q-5"]')).not.toBeNull();
  });

  it("charts the themes as an accessible image with the numbers as a table", () => {
    const doc = parse(renderAnalysisPage(analysisModel()));
    const svg = doc.querySelector('#themes svg[role="img"]');
    expect(svg?.querySelector("title")?.textContent).toBe("Sources per theme, by side");
    // One bar row per aspect: sync, editor, and the request insight without counts.
    expect(svg?.querySelectorAll("g")).toHaveLength(3);
    expect([...(svg?.querySelectorAll("rect title") ?? [])].map((t) => t.textContent)).toContain("Sync: 12,345 sources (complaints)");
    const rows = [...doc.querySelectorAll("#themes table tbody tr")].map((tr) => tr.textContent);
    expect(rows[0]).toContain("12,388");
    expect(doc.querySelector("#themes .legend")?.textContent).toContain("Complaints");
    const coverage = [...doc.querySelectorAll("#coverage tbody tr")].map((tr) => [...tr.children].map((c) => c.textContent));
    expect(coverage).toEqual([
      ["reddit", "1,200", "300", "3"],
      ["github", "40", "40", "1"],
    ]);
  });

  it("shows a running analysis live, with the script, and a finished one without", () => {
    const running = renderAnalysisPage(analysisModel({ status: "running", result: null, finished_at: null }, "/share/tok123/events"));
    const doc = expectWellFormed(running);
    expect(doc.querySelector("[data-events]")?.getAttribute("data-events")).toBe("/share/tok123/events");
    expect(doc.querySelector("[data-events] progress")).not.toBeNull();
    expect(doc.querySelector('[aria-live="polite"]')?.textContent).toContain("running");
    expect(doc.querySelector("noscript")?.textContent).toMatch(/reload/i);
    expect([...doc.querySelectorAll("script")].map((s) => s.getAttribute("src"))).toEqual([LIVE_SCRIPT_SRC]);

    const finished = parse(renderAnalysisPage(analysisModel()));
    expect(finished.querySelector("[data-events]")).toBeNull();
    expect(finished.querySelectorAll("script")).toHaveLength(0);
    expect(finished.querySelector("progress")).toBeNull();
  });

  it("shows why an analysis failed, and marks a partial result", () => {
    const failed = parse(renderAnalysisPage(analysisModel({ status: "failed", result: null, error: "Retrieval timed out <after 60 s>" })));
    expect(failed.getElementById("stopped")?.textContent).toContain("Retrieval timed out <after 60 s>");
    expect(failed.querySelector("script")).toBeNull();
    const partial = renderAnalysisPage(analysisModel({ status: "partial" }));
    expectWellFormed(partial);
    expect(parse(partial).querySelector('[role="note"]')?.textContent).toMatch(/partial/);
  });

  it("frames the page: product, footer with the link's expiry in UTC, no tracking", () => {
    const doc = parse(renderAnalysisPage(analysisModel()));
    expect(doc.querySelector("header")?.textContent).toContain("Research Evidence");
    const expiry = doc.querySelector(`footer time[datetime="${frame.expiresAt}"]`);
    expect(expiry?.textContent).toBe("2026-12-03 09:15 UTC");
    expect(doc.querySelector("footer")?.textContent).toMatch(/read-only shared view/);
    expect(doc.querySelector('a.skip-link[href="#main"]')).not.toBeNull();
    expect(doc.querySelector("main#main")).not.toBeNull();
  });
});

const insightRecord: InsightRecord = {
  id: "6f1c2a7e-0000-4000-8000-0000000000a1",
  entity_id: "6f1c2a7e-0000-4000-8000-0000000000e1",
  project_id: null,
  revision: 2,
  title: "Sync is the top complaint <for now>",
  summary: "Users on Android report that sync fails every time.",
  reasoning: "Three sources on two platforms say so.",
  limitations: ["Ten sources only."],
  tags: ["sync", "android"],
  evidence: [],
  origin: "agent",
  actor_id: "6f1c2a7e-0000-4000-8000-0000000000b1",
  client_label: null,
  review_state: "unreviewed",
  analysis_id: null,
  created_at: "2026-11-20T08:00:00.000Z",
  updated_at: "2026-11-25T08:00:00.000Z",
};

const source = {
  source_revision_id: "6f1c2a7e-0000-4000-8000-0000000000c1",
  content_id: "6f1c2a7e-0000-4000-8000-0000000000c2",
  available: true,
  text_kind: "original" as const,
  allowed_relations: ["supports" as const, "contradicts" as const, "context" as const],
  kind: "issue",
  platform: "github",
  url: "https://github.com/acme/notes/issues/1",
  title: "Sync fails on Android",
  author: "kwame",
  published_at: "2026-11-19T10:00:00.000Z",
  text_length: 64,
  captured_at: "2026-11-19T11:00:00.000Z",
  removed_at: null,
};

const knowledgeModel = (): KnowledgePageModel => {
  const base = {
    source_revision_id: source.source_revision_id,
    content_id: source.content_id,
    relation: "supports" as const,
    start: 0,
    end: 36,
    available: true,
    source_text_kind: "original" as const,
    allowed_relations: source.allowed_relations,
    span: null,
  };
  return {
    frame,
    record: insightRecord,
    subject: "Acme Notes",
    citations: [
      {
        ...base,
        position: 0,
        quote: "Sync fails every time on Android 14.",
        source,
        context: { before: "", quote: "Sync fails every time on Android 14.", after: " Sync is <unreliable>." },
      },
      { ...base, position: 1, relation: "contradicts", quote: "Sync works for me.", available: false, source: null, context: null },
    ],
    history: [
      {
        revision: 1,
        title: "Sync fails",
        summary: "",
        origin: "agent",
        review_state: "unreviewed",
        evidence_count: 1,
        created_at: "2026-11-20T08:00:00.000Z",
      },
      {
        revision: 2,
        title: insightRecord.title,
        summary: "",
        origin: "agent",
        review_state: "unreviewed",
        evidence_count: 2,
        created_at: "2026-11-25T08:00:00.000Z",
      },
    ],
  };
};

describe("a theme's sources", () => {
  const TOKEN = "A".repeat(43);
  const item = (over: Partial<ThemeSourceItem> = {}): ThemeSourceItem => ({
    content_id: "00000000-0000-4000-8000-0000000000a1",
    title: "Sync <fails>",
    platform: "reddit",
    author: "mira",
    published_at: "2026-11-20T14:03:00.000Z",
    url: "https://example.com/post/a1",
    feedback_kind: "bug_report",
    quote: "Sync keeps failing on my phone <b>every</b> time.",
    start_offset: 0,
    end_offset: 48,
    opinion_unit_id: null,
    in_sample: true,
    evidence_number: 2,
    ...over,
  });
  const themeModel = (over: Partial<ThemeSourcesPageModel> = {}): ThemeSourcesPageModel => ({
    frame,
    question: QUESTION,
    subject: "Acme Notes",
    insight: insight({ evidence: [E1, E2] }),
    n: 1,
    sharePath: `/share/${TOKEN}`,
    sort: "representative",
    cursor: null,
    sources: {
      analysis_id: "6f1c2a7e-0000-4000-8000-000000000001",
      insight: { id: 1, title: "Sync — complaints (12,345 sources)", aspect: "sync", polarity: "complaint", sources: 12_345 },
      sort: "representative",
      total: 12_345,
      sample: 120,
      listed: null,
      unavailable: 1,
      complete: false,
      count_basis: "The insight counts the larger of two numbers.",
      sources: [
        item(),
        item({
          content_id: "00000000-0000-4000-8000-0000000000a2",
          title: "",
          author: "",
          url: "",
          quote: "",
          published_at: null,
          feedback_kind: null,
          evidence_number: null,
          unavailable: { reason: "author_erased", at: "2026-11-26T10:00:00.000Z" },
        }),
        item({ content_id: "00000000-0000-4000-8000-0000000000a3", url: "javascript:alert(1)", evidence_number: null, in_sample: false }),
      ],
      limit: 50,
      has_more: true,
      next_cursor: "WyJyIiw1MF0",
    },
    ...over,
  });

  it("shows each source as a quote card, escaped, with the way back to the analysis and on to the next page", () => {
    const page = renderThemeSourcesPage(themeModel());
    const doc = expectWellFormed(page);
    expect(doc.querySelector("h1")?.textContent).toBe("Sync — complaints (12,345 sources)");
    expect(page).toContain("Sync keeps failing on my phone &lt;b&gt;every&lt;/b&gt; time.");
    expect(page).toContain("Sync &lt;fails&gt;");
    const figures = doc.querySelectorAll("#sources figure.quote");
    expect(figures).toHaveLength(3);
    expect(figures[0]?.querySelector(`a[href="/share/${TOKEN}#q-2"]`)?.textContent).toBe("quoted as [2]");
    expect(figures[1]?.textContent).toMatch(/asked to be forgotten \(2026-11-26\)/);
    expect(figures[1]?.querySelector("a")).toBeNull();
    expect(doc.querySelector('a[href^="javascript"]')).toBeNull();
    expect(figures[2]?.querySelector(".unlinked")?.textContent).toBe("javascript:alert(1)");
    expect(doc.querySelector(`a[href="/share/${TOKEN}#insight-1"]`)?.textContent).toBe(QUESTION);
    expect(doc.querySelector('a[rel="next"]')?.getAttribute("href")).toBe(`/share/${TOKEN}/insights/1?cursor=WyJyIiw1MF0`);
    expect(doc.querySelector("nav.pager")?.textContent).not.toContain("First page");
    expect(doc.querySelector(".note")?.textContent).toBe("The insight counts the larger of two numbers.");
    // Every link stays on the page (the skip link), on the page's own token, or leaves for a source.
    for (const a of doc.querySelectorAll("a")) expect(a.getAttribute("href")).toMatch(new RegExp(`^(https?:|#main$|/share/${TOKEN}[/#?])`));
  });

  it("marks the order shown and, past the first page, links back to it in that order", () => {
    const doc = parse(renderThemeSourcesPage(themeModel({ sort: "newest", cursor: "WyJuIl0" })));
    expect(doc.querySelector('nav.toc a[aria-current="page"]')?.textContent).toBe("Newest first");
    expect(doc.querySelector('a[rel="next"]')?.getAttribute("href")).toBe(`/share/${TOKEN}/insights/1?sort=newest&cursor=WyJyIiw1MF0`);
    expect(doc.querySelector("nav.pager a")?.getAttribute("href")).toBe(`/share/${TOKEN}/insights/1?sort=newest`);
    expect(doc.querySelector("#sources h2")?.textContent).toBe("Sources (continued)");
  });

  it("is linked from each insight of the shared analysis's page", () => {
    const doc = parse(renderAnalysisPage({ ...analysisModel(), sharePath: `/share/${TOKEN}` }));
    expect(doc.querySelector("#insight-1 a.all-sources")?.getAttribute("href")).toBe(`/share/${TOKEN}/insights/1`);
    expect(doc.querySelector("#insight-3 a.all-sources")?.textContent).toBe("All 2 sources behind this theme");
    // Without the page's own path (a page rendered on its own) there is nothing to link to.
    expect(parse(renderAnalysisPage(analysisModel())).querySelector("a.all-sources")).toBeNull();
  });
});

describe("knowledge page", () => {
  it("shows each quote inside its captured text, or says the source is gone", () => {
    const page = renderKnowledgePage(knowledgeModel());
    const doc = expectWellFormed(page);
    expect(doc.querySelector("h1")?.textContent).toBe("Sync is the top complaint <for now>");
    expect(doc.querySelector("#citation-1 mark")?.textContent).toBe("Sync fails every time on Android 14.");
    expect(doc.querySelector("#citation-1 blockquote")?.textContent).toBe("Sync fails every time on Android 14. Sync is <unreliable>.");
    expect(doc.querySelector("#citation-1 h3")?.textContent).toContain("Supports");
    expect(doc.querySelector('#citation-1 a[href="https://github.com/acme/notes/issues/1"]')).not.toBeNull();
    expect(doc.querySelector("#citation-2")?.textContent).toContain("This source is no longer available");
    expect(doc.querySelector("#citation-2 h3")?.textContent).toContain("Contradicts");
    expect([...doc.querySelectorAll(".tags li")].map((li) => li.textContent)).toEqual(["sync", "android"]);
  });

  it("lists the revisions newest first with the current one marked", () => {
    const doc = parse(renderKnowledgePage(knowledgeModel()));
    const rows = [...doc.querySelectorAll("#history tbody tr")];
    expect(rows.map((r) => r.querySelector("th")?.textContent)).toEqual(["2 (current)", "1"]);
    expect(rows[0]?.getAttribute("aria-current")).toBe("true");
    expect(rows[1]?.hasAttribute("aria-current")).toBe(false);
  });
});

const quote = {
  content_id: "c1",
  opinion_unit_id: "u1",
  quote: "Way too expensive now.",
  start: 0,
  end: 22,
  side: "complaint" as const,
  sentiment: -0.6,
  platform: "reddit",
  url: "https://reddit.com/r/x/1",
  author: "pat",
  published_at: "2026-11-20T10:00:00.000Z",
};

const summary: IntelligenceSummary = {
  entity_id: "e1",
  entity: { id: "e1", name: "Acme <Notes>", kind: "company" },
  window_days: 30,
  windows: {
    current: { start: "2026-10-27T00:00:00.000Z", end: "2026-11-26T00:00:00.000Z" },
    previous: { start: "2026-09-27T00:00:00.000Z", end: "2026-10-27T00:00:00.000Z" },
  },
  totals: {
    current: { sources: 12_000, comments: 3_400, with_opinion_units: 9_000, opinion_units: 20_000 },
    previous: { sources: 10_000, comments: 3_000, with_opinion_units: 8_000, opinion_units: 18_000 },
  },
  platforms: [
    { platform: "reddit", current: { sources: 8_000, comments: 3_000 }, previous: { sources: 7_000, comments: 2_500 }, coverage: null },
    {
      platform: "github",
      current: { sources: 4_000, comments: 400 },
      previous: { sources: 3_000, comments: 500 },
      coverage: {
        coverage_state: "complete",
        proven: true,
        run_id: "r1",
        collection_scope: "entity",
        query: null,
        started_at: "2026-11-25T10:00:00.000Z",
        finished_at: "2026-11-25T10:30:00.000Z",
        recorded_at: "2026-11-25T10:30:00.000Z",
        targets: 3,
        targets_read_to_end: 3,
        items_found: 4_000,
        items_stored: 4_000,
      },
    },
  ],
  themes: [
    {
      aspect: "pricing",
      label: "Pricing",
      polarity: "complaint",
      sources: 1_500,
      share: 0.125,
      counts: { complaint: 1_500, praise: 100, request: 0, neutral: 20 },
      statements: 1_800,
      previous_sources: 900,
      change: "growing",
      quotes: [quote],
    },
    {
      aspect: "editor",
      label: "Editor",
      polarity: "praise",
      sources: 800,
      share: 0.07,
      counts: { complaint: 10, praise: 800, request: 5, neutral: 0 },
      statements: 900,
      previous_sources: 820,
      change: "steady",
      quotes: [],
    },
  ],
  changes: {
    new: [],
    growing: [
      {
        aspect: "pricing",
        label: "Pricing",
        polarity: "complaint",
        current_sources: 1_500,
        previous_sources: 900,
        current_share: 0.125,
        previous_share: 0.09,
      },
    ],
    fading: [],
  },
  competitors: [{ id: "g1", name: "Globex", sources: 2_000 }],
  competitor_gaps: [],
  limitations: ["Twitter was not collected."],
  basis: {},
  generated_at: "2026-11-26T09:00:00.000Z",
};

const entityModel = (): EntityPageModel => ({
  frame,
  summary,
  volume: {
    bucket: "day",
    points: Array.from({ length: 60 }, (_, i) => ({
      start: new Date(Date.UTC(2026, 8, 27 + i)).toISOString().slice(0, 10),
      sources: 300 + ((i * 37) % 200),
      comments: 80 + ((i * 13) % 50),
    })),
  },
  jobs: [{ id: "j1", status: "completed", platforms: ["reddit", "github"], created_at: "2026-11-25T10:00:00.000Z", finished_at: null }],
  analyses: [
    { id: "a1", question: "What do users <say>?", status: "completed", created_at: "2026-11-25T10:00:00.000Z", finished_at: null },
  ],
});

describe("entity page", () => {
  it("shows totals, volume, themes with a quote each, coverage, jobs and analyses", () => {
    const page = renderEntityPage(entityModel());
    const doc = expectWellFormed(page);
    expect(doc.querySelector("h1")?.textContent).toBe("Acme <Notes> (company)");
    const volume = doc.querySelector('#volume svg[role="img"]');
    expect(volume?.querySelector("polyline")).not.toBeNull();
    expect(volume?.querySelectorAll("polyline")).toHaveLength(2);
    expect(volume?.textContent).toContain("2026-09-27");
    expect(volume?.textContent).toContain("2026-11-25");
    const themes = [...doc.querySelectorAll("#themes table[aria-label], #themes .table-wrap table")].at(-1);
    const row = [...(themes?.querySelectorAll("tbody tr") ?? [])][0];
    expect([...(row?.children ?? [])].map((c) => c.textContent)).toEqual(["Pricing", "Complaints", "1,500", "13%", "900", "growing"]);
    expect(doc.querySelector("#themes blockquote")?.textContent).toBe("Way too expensive now.");
    const coverage = [...doc.querySelectorAll("#coverage tbody tr")].map((tr) => [...tr.children].map((c) => c.textContent));
    expect(coverage[0]).toEqual(["reddit", "8,000", "7,000", "not recorded", "—", "—"]);
    expect(coverage[1]).toEqual(["github", "4,000", "3,000", "complete", "yes", "2026-11-25 10:30 UTC"]);
    expect(doc.querySelector("#changes")?.textContent).toContain("Pricing");
    expect(doc.querySelector("#analyses")?.textContent).toContain("What do users <say>?");
    expect(doc.querySelector("#competitors")?.textContent).toContain("Globex");
    expect(doc.querySelector("#totals tbody")?.textContent).toContain("12,000");
  });
});

describe("not-found page", () => {
  it("says the link is not valid and nothing else about it", () => {
    const page = renderNotFoundPage();
    const doc = expectWellFormed(page);
    expect(doc.querySelector("h1")?.textContent).toBe("This link is not valid");
    expect(page).not.toMatch(/expire|revoke|never existed|deleted/i);
    expect(doc.querySelectorAll("time, script")).toHaveLength(0);
  });
});

describe("assets", () => {
  it("has a stylesheet of our own with print rules and a content hash", () => {
    expect(STYLESHEET_HASH).toMatch(/^[0-9a-f]{16}$/);
    expect(STYLESHEET).not.toMatch(/url\(|@import|@font-face/);
    expect(STYLESHEET).toContain("@media print");
    expect(STYLESHEET).toContain(":target");
    expect(STYLESHEET).toContain("overflow-wrap: anywhere");
  });

  it("has a live script that needs no eval, inline style or markup strings", () => {
    expect(LIVE_SCRIPT_SRC).toMatch(/^\/assets\/share-live\.js\?v=[0-9a-f]{16}$/);
    expect(LIVE_SCRIPT).not.toMatch(/\beval\(|new Function|innerHTML|insertAdjacentHTML|\.style\b|setAttribute\("on/);
  });
});

/** A stand-in EventSource the test drives by hand. */
class FakeEventSource {
  static readonly CONNECTING = 0;
  static readonly OPEN = 1;
  static readonly CLOSED = 2;
  static last: FakeEventSource | null = null;
  readyState = FakeEventSource.OPEN;
  closed = false;
  private readonly listeners = new Map<string, ((e: { data?: string }) => void)[]>();
  constructor(readonly url: string) {
    FakeEventSource.last = this;
  }
  addEventListener(type: string, fn: (e: { data?: string }) => void) {
    this.listeners.set(type, [...(this.listeners.get(type) ?? []), fn]);
  }
  close() {
    this.closed = true;
    this.readyState = FakeEventSource.CLOSED;
  }
  emit(type: string, data?: unknown) {
    for (const fn of this.listeners.get(type) ?? []) fn(data === undefined ? {} : { data: JSON.stringify(data) });
  }
}

function runLiveScript() {
  const page = renderAnalysisPage(analysisModel({ status: "running", result: null }, "/share/tok123/events"));
  const { document } = parseHTML(page);
  const reload = vi.fn();
  const store = new Map<string, string>();
  const sessionStorage = { getItem: (k: string) => store.get(k) ?? null, setItem: (k: string, v: string) => store.set(k, v) };
  // The script reads browser globals; a function with those names as parameters stands in for a window.
  new Function("document", "EventSource", "location", "sessionStorage", LIVE_SCRIPT)(document, FakeEventSource, { reload }, sessionStorage);
  return { document, reload, source: FakeEventSource.last as FakeEventSource };
}

describe("live script", () => {
  it("shows progress and arriving quotes, then reloads on the result", () => {
    const { document, reload, source } = runLiveScript();
    expect(source.url).toBe("/share/tok123/events");
    source.emit("progress", { step: "retrieve", status: "running", progress: 0.2 });
    expect(document.querySelector("[data-live-status]")?.textContent).toBe("Running: retrieve (20%)");
    source.emit("evidence", { number: 1, quote: "<b>Sync</b> is broken.", platform: "reddit", author: "mira" });
    source.emit("evidence", { number: 1, quote: "<b>Sync</b> is broken.", platform: "reddit", author: "mira" });
    const items = document.querySelectorAll("[data-live-quotes] li");
    expect(items).toHaveLength(1);
    expect(items[0]?.querySelector("blockquote")?.textContent).toBe("<b>Sync</b> is broken.");
    expect(items[0]?.querySelector("b")).toBeNull();
    expect(items[0]?.querySelector("figcaption")?.textContent).toBe("[1] · reddit · mira");
    expect(document.querySelector("[data-live-quotes-heading]")?.hasAttribute("hidden")).toBe(false);
    source.emit("result", { status: "completed" });
    expect(source.closed).toBe(true);
    expect(reload).toHaveBeenCalledTimes(1);
  });

  it("tells the reader when live updates stop for good", () => {
    const { document, reload, source } = runLiveScript();
    source.readyState = FakeEventSource.CLOSED;
    source.emit("error");
    expect(document.querySelector("[data-live-status]")?.textContent).toBe("Live updates stopped; reload the page.");
    expect(document.querySelector("[data-live-reload]")?.hasAttribute("hidden")).toBe(false);
    expect(reload).not.toHaveBeenCalled();
  });

  it("reloads when the server reports the analysis failed", () => {
    const { reload, source } = runLiveScript();
    source.emit("error", { status: "failed", detail: "boom" });
    expect(source.closed).toBe(true);
    expect(reload).toHaveBeenCalledTimes(1);
  });
});
