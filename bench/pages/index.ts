/**
 * Render time of the shared pages (src/delivery/share/pages), pure functions with no database.
 *
 *   npx tsx bench/pages/index.ts [--renders 200]
 *
 * Builds large but realistic models by hand: an analysis with 40 insights of 6 quotes each
 * (quotes of 80–400 characters, an answer citing every insight), a knowledge record with 30
 * citations and the captured text around each, and an entity summary with 10 themes and 180
 * days of volume. Renders each page `--renders` times after a warm-up and prints the median and
 * p95 time per render and the size of the HTML. Target: the analysis page well under 100 ms.
 */
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import {
  type AnalysisPageModel,
  type EntityPageModel,
  type KnowledgePageModel,
  renderAnalysisPage,
  renderEntityPage,
  renderKnowledgePage,
} from "../../src/delivery/share/pages/index.js";
import type { EvidenceItem, InsightItem } from "../../src/insights/analysis/schemas.js";
import type { IntelligenceSummary } from "../../src/insights/intelligence/schemas.js";

const args = process.argv.slice(2);
const RENDERS = Number(args[args.indexOf("--renders") + 1] ?? 0) || 200;
const WARMUP = 50;
const TARGET_MS = 100;

/** mulberry32: the same models on every run, so figures compare across commits. */
function random(seed: number) {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = (
  "sync editor export pricing search mobile app notes offline update broken slow fast love hate team plan " +
  "android ios desktop web clipper tags folders markdown tables images attachments backup restore login " +
  "support reply weeks crash again after every time really great clean simple expensive worth cheaper " +
  "feature request please add would be nice need missing since version today finally works lost data"
).split(" ");
const PLATFORMS = ["reddit", "github", "news", "twitter", "hackernews"];
const SIDES = ["complaint", "praise", "request", "neutral"] as const;

function text(rnd: () => number, min: number, max: number): string {
  const target = min + Math.floor(rnd() * (max - min));
  let out = "";
  while (out.length < target) out += `${out ? " " : ""}${WORDS[Math.floor(rnd() * WORDS.length)]}`;
  return `${out.charAt(0).toUpperCase()}${out.slice(1)}.`;
}

const FRAME = { expiresAt: "2026-12-03T09:15:00.000Z", renderedAt: "2026-11-26T09:15:42.000Z" };
const uuid = (n: number) => `6f1c2a7e-0000-4000-8000-${String(n).padStart(12, "0")}`;
const day = (offset: number) => new Date(Date.UTC(2026, 4, 30) + offset * 86_400_000).toISOString();

export function analysisModel(insights = 40, quotesEach = 6): AnalysisPageModel {
  const rnd = random(20261126);
  let number = 0;
  const all: EvidenceItem[] = [];
  const items: InsightItem[] = Array.from({ length: insights }, (_, i) => {
    const polarity = SIDES[i % 4] as (typeof SIDES)[number];
    const evidence = Array.from({ length: quotesEach }, () => {
      number += 1;
      const quote = text(rnd, 80, 400);
      const e: EvidenceItem = {
        number,
        content_id: uuid(number),
        quote,
        url: `https://www.reddit.com/r/notes/comments/${number.toString(36)}abc/some_long_thread_title_here/`,
        platform: PLATFORMS[number % PLATFORMS.length] as string,
        author: `user_${Math.floor(rnd() * 1e6)}`,
        published_at: day(Math.floor(rnd() * 180)),
        feedback_kind: "complaint",
        start_offset: 0,
        end_offset: quote.length,
        opinion_unit_id: uuid(100_000 + number),
      };
      all.push(e);
      return e;
    });
    const sources = 20 + Math.floor(rnd() * 5000);
    return {
      title: `Aspect ${i + 1} ${WORDS[i % WORDS.length]} — ${polarity} (${sources} sources)`,
      summary: text(rnd, 200, 600),
      sentiment: polarity === "complaint" ? "negative" : polarity === "praise" ? "positive" : "neutral",
      confidence: 0.4 + rnd() * 0.5,
      evidence,
      aspect: `aspect-${i + 1}`,
      polarity,
      sources,
      counts: { complaint: Math.floor(rnd() * 3000), praise: Math.floor(rnd() * 3000), neutral: Math.floor(rnd() * 200), request: 0 },
    };
  });
  const answer = items.map((it) => `${it.title} ${it.evidence.map((e) => `[${e.number}]`).join("")}.`).join(" ");
  return {
    frame: FRAME,
    subject: "Acme Notes",
    eventsPath: null,
    analysis: {
      analysis_id: uuid(1),
      status: "completed",
      question: "What do users complain about most, and what do they ask for?",
      search_mode: "multi_source",
      platforms: PLATFORMS,
      depth: "deep",
      entity_id: uuid(2),
      project_id: null,
      request_id: null,
      provided_sources: [],
      result: {
        status: "completed",
        data: {
          answer,
          citations: all.map((e) => ({ number: e.number, content_id: e.content_id, quote: e.quote })),
          insights: items,
          evidence: all,
          coverage: Object.fromEntries(PLATFORMS.map((p, i) => [p, { in_scope: 20_000 * (i + 1), retrieved: 2_000, cited: 48 }])),
          limitations: ["Twitter was collected for the last 7 days only.", "Comments older than a year were not read."],
          engine: "extractive",
          scope: {},
        },
      },
      error: null,
      created_at: "2026-11-26T09:00:00.000Z",
      updated_at: "2026-11-26T09:15:00.000Z",
      finished_at: "2026-11-26T09:15:00.000Z",
      events_url: "/agent/v1/analysis/x/events",
    },
  };
}

export function knowledgeModel(citations = 30): KnowledgePageModel {
  const rnd = random(7);
  const relations = ["supports", "contradicts", "context"] as const;
  return {
    frame: FRAME,
    subject: "Acme Notes",
    record: {
      id: uuid(10),
      entity_id: uuid(2),
      project_id: null,
      revision: 12,
      title: "Sync failures drive most cancellations on Android",
      summary: text(rnd, 400, 900),
      reasoning: text(rnd, 600, 1500),
      limitations: [text(rnd, 60, 200), text(rnd, 60, 200)],
      tags: ["sync", "android", "churn"],
      evidence: [],
      origin: "agent",
      actor_id: uuid(11),
      client_label: null,
      review_state: "reviewed",
      analysis_id: null,
      created_at: "2026-10-01T08:00:00.000Z",
      updated_at: "2026-11-25T08:00:00.000Z",
    },
    citations: Array.from({ length: citations }, (_, i) => {
      const quote = text(rnd, 80, 300);
      const available = i % 10 !== 9;
      return {
        source_revision_id: uuid(1000 + i),
        content_id: uuid(2000 + i),
        quote,
        relation: relations[i % 3] as (typeof relations)[number],
        start: 280,
        end: 280 + quote.length,
        position: i,
        available,
        source_text_kind: "original" as const,
        allowed_relations: [...relations],
        span: null,
        source: {
          source_revision_id: uuid(1000 + i),
          content_id: uuid(2000 + i),
          available,
          text_kind: "original" as const,
          allowed_relations: [...relations],
          kind: "post",
          platform: PLATFORMS[i % PLATFORMS.length] as string,
          url: `https://github.com/acme/notes/issues/${1000 + i}`,
          title: text(rnd, 20, 80),
          author: `user_${i}`,
          published_at: day(i),
          text_length: 4000,
          captured_at: day(i + 1),
          removed_at: available ? null : day(i + 30),
        },
        context: available ? { before: text(rnd, 260, 280), quote, after: text(rnd, 260, 280) } : null,
      };
    }),
    history: Array.from({ length: 12 }, (_, i) => ({
      revision: 12 - i,
      title: "Sync failures drive most cancellations on Android",
      summary: "",
      origin: "agent",
      review_state: i === 0 ? "reviewed" : "unreviewed",
      evidence_count: 30 - i,
      created_at: day(120 + 12 - i),
    })),
  };
}

export function entityModel(themes = 10, points = 180): EntityPageModel {
  const rnd = random(42);
  const quote = (i: number) => ({
    content_id: uuid(3000 + i),
    opinion_unit_id: uuid(4000 + i),
    quote: text(rnd, 80, 300),
    start: 0,
    end: 100,
    side: SIDES[i % 4] as (typeof SIDES)[number],
    sentiment: -0.5,
    platform: PLATFORMS[i % PLATFORMS.length] as string,
    url: `https://news.ycombinator.com/item?id=${4000 + i}`,
    author: `user_${i}`,
    published_at: day(i),
  });
  const change = (i: number) => ({
    aspect: `aspect-${i}`,
    label: `Aspect ${i}`,
    polarity: SIDES[i % 4] as (typeof SIDES)[number],
    current_sources: 100 + i,
    previous_sources: 50 + i,
    current_share: 0.05,
    previous_share: 0.02,
  });
  const summary: IntelligenceSummary = {
    entity_id: uuid(2),
    entity: { id: uuid(2), name: "Acme Notes", kind: "company" },
    window_days: 90,
    windows: { current: { start: day(90), end: day(180) }, previous: { start: day(0), end: day(90) } },
    totals: {
      current: { sources: 48_000, comments: 12_000, with_opinion_units: 40_000, opinion_units: 95_000 },
      previous: { sources: 41_000, comments: 10_500, with_opinion_units: 35_000, opinion_units: 80_000 },
    },
    platforms: PLATFORMS.map((platform, i) => ({
      platform,
      current: { sources: 10_000 - i * 1000, comments: 2_000 },
      previous: { sources: 9_000 - i * 1000, comments: 1_800 },
      coverage:
        i === 4
          ? null
          : {
              coverage_state: "complete",
              proven: i % 2 === 0,
              run_id: uuid(5000 + i),
              collection_scope: "entity",
              query: null,
              started_at: day(179),
              finished_at: day(179),
              recorded_at: day(179),
              targets: 5,
              targets_read_to_end: 5,
              items_found: 10_000,
              items_stored: 10_000,
            },
    })),
    themes: Array.from({ length: themes }, (_, i) => ({
      aspect: `aspect-${i}`,
      label: `Aspect ${i} ${WORDS[i]}`,
      polarity: SIDES[i % 4] as (typeof SIDES)[number],
      sources: 3000 - i * 200,
      share: (3000 - i * 200) / 48_000,
      counts: { complaint: 2000 - i * 100, praise: 500 + i * 10, request: 300, neutral: 200 },
      statements: 4000,
      previous_sources: 2500 - i * 150,
      change: (["new", "growing", "fading", "steady"] as const)[i % 4] as "new",
      quotes: i % 3 === 2 ? [] : [quote(i)],
    })),
    changes: { new: [change(1)], growing: [change(2), change(3)], fading: [change(4)] },
    competitors: [
      { id: uuid(6), name: "Globex", sources: 20_000 },
      { id: uuid(7), name: "Initech", sources: 9_000 },
    ],
    competitor_gaps: [],
    limitations: ["Twitter was collected for the last 7 days only."],
    basis: {},
    generated_at: day(180),
  };
  return {
    frame: FRAME,
    summary,
    volume: {
      bucket: "day",
      points: Array.from({ length: points }, (_, i) => ({
        start: day(i).slice(0, 10),
        sources: 200 + Math.floor(rnd() * 400 + 100 * Math.sin(i / 9)),
        comments: 50 + Math.floor(rnd() * 120),
      })),
    },
    jobs: Array.from({ length: 10 }, (_, i) => ({
      id: uuid(7000 + i),
      status: i === 0 ? "running" : "completed",
      platforms: PLATFORMS.slice(0, 1 + (i % 5)),
      created_at: day(180 - i),
      finished_at: i === 0 ? null : day(180 - i),
    })),
    analyses: Array.from({ length: 10 }, (_, i) => ({
      id: uuid(8000 + i),
      question: text(rnd, 40, 140),
      status: "completed",
      created_at: day(180 - i),
      finished_at: day(180 - i),
    })),
  };
}

function measure(name: string, render: () => string) {
  let html = "";
  for (let i = 0; i < WARMUP; i++) html = render();
  const samples: number[] = [];
  for (let i = 0; i < RENDERS; i++) {
    const started = performance.now();
    html = render();
    samples.push(performance.now() - started);
  }
  samples.sort((a, b) => a - b);
  const at = (p: number) => samples[Math.min(samples.length - 1, Math.ceil(p * samples.length) - 1)] as number;
  const kb = Buffer.byteLength(html) / 1024;
  process.stdout.write(
    `${name.padEnd(34)} median ${at(0.5).toFixed(2).padStart(6)} ms   p95 ${at(0.95).toFixed(2).padStart(6)} ms   ${kb.toFixed(0).padStart(4)} KB\n`,
  );
  return at(0.5);
}

function main() {
  process.stdout.write(`Shared pages, ${RENDERS} renders each after ${WARMUP} warm-up renders (node ${process.version})\n`);
  const analysis = analysisModel();
  const knowledge = knowledgeModel();
  const entity = entityModel();
  const median = measure("analysis (40 insights × 6 quotes)", () => renderAnalysisPage(analysis));
  measure("knowledge (30 citations)", () => renderKnowledgePage(knowledge));
  measure("entity (10 themes, 180 days)", () => renderEntityPage(entity));
  process.stdout.write(`analysis target: median under ${TARGET_MS} ms — ${median < TARGET_MS ? "met" : "MISSED"}\n`);
}

// The model builders are exported for checks that want the same pages; only running the file benches.
if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) main();
