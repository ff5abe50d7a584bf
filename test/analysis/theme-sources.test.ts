import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ThemeRow as ScopeThemeRow, scopeRest } from "../../src/insights/analysis/theme-sources-scope.js";
import { analysisProcessor } from "../../workers/analysis.js";
import { addMember, enrich } from "../deletion/support.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { seeded } from "../helpers/random.js";
import { addEntity, createTenant, storeSources, type Tenant } from "./fixtures.js";
import { listen, openStream } from "./sse-client.js";

/**
 * `GET /agent/v1/analysis/{id}/insights/{n}/sources`: every source behind an insight. On a random corpus
 * (seeded, so a failure replays) the number of sources listed equals the count each insight states, when
 * the analysed sample held the whole scope; when the scope holds more than the sample, the list is the
 * sample's sources and then exactly the scope's sources whose stored statements the count matched
 * (worked out here from the stored units). Deletion and erasure after the analysis, tenancy, and paging
 * under concurrent ingest. Real HTTP, PostgreSQL, Redis and worker.
 */
let h: Harness;
let base: string;
let closeServer: () => Promise<void>;
let tenant: Tenant;
let stranger: Tenant;

const auth = (token: string) => ({ Authorization: `Bearer ${token}` });

const ASPECTS: { name: string; complaint: string[]; praise: string[]; request?: string[] }[] = [
  { name: "sync", complaint: ["Sync keeps failing on my phone.", "The sync lost my edits again."], praise: ["Sync works flawlessly."] },
  {
    name: "pricing",
    complaint: ["The pricing is way too expensive.", "Pricing went up again and it is steep."],
    praise: ["The pricing is fair."],
  },
  {
    name: "editor",
    complaint: ["The editor lags on long documents."],
    praise: ["The editor is a joy to use.", "The editor is clean and fast."],
  },
  {
    name: "search",
    complaint: ["Search misses notes I know exist.", "The search is slow."],
    praise: ["Search finds everything instantly."],
  },
  { name: "export", complaint: ["Export to PDF breaks my tables."], praise: ["Export is quick."], request: ["Please add export to Word."] },
];
const PLATFORMS = ["reddit", "hackernews", "github", "web"];

/** `n` posts of one to three statements about the aspects, each with its own author and date. */
function corpus(seed: number, n: number) {
  const { rand, pick } = seeded(seed);
  return Array.from({ length: n }, (_, i) => {
    const said = new Set<string>();
    const parts = 1 + Math.floor(rand() * 3);
    for (let k = 0; k < parts; k++) {
      const a = pick(ASPECTS);
      const sides = [a.complaint, a.praise, ...(a.request ? [a.request] : [])];
      said.add(pick(pick(sides)));
    }
    return {
      platform: pick(PLATFORMS),
      title: `Post ${seed}-${i}`,
      author: `author${Math.floor(rand() * 1000)}`,
      content: [...said].join(" "),
      published_at: new Date(Date.UTC(2026, 0, 1) + Math.floor(rand() * 300) * 86_400_000).toISOString(),
    };
  });
}

interface Insight {
  id: number;
  title: string;
  sources: number;
  sources_url: string;
  evidence: { number: number; content_id: string; quote: string }[];
}
interface Item {
  content_id: string;
  title: string;
  platform: string;
  author: string;
  published_at: string | null;
  url: string;
  quote: string;
  start_offset: number;
  end_offset: number;
  in_sample: boolean;
  evidence_number: number | null;
  unavailable?: { reason: string; at: string };
}
interface Page {
  total: number;
  sample: number;
  listed: number | null;
  unavailable: number;
  complete: boolean;
  count_basis: string;
  sources: Item[];
  has_more: boolean;
  next_cursor: string | null;
}

/** Runs an analysis through the API to its end; answers its id and result's insights. */
async function analyse(t: Tenant, body: Record<string, unknown>): Promise<{ id: string; insights: Insight[] }> {
  const stream = await openStream(`${base}/agent/v1/analysis/run`, { method: "POST", token: t.token, body });
  expect(stream.status).toBe(200);
  await stream.closed;
  const result = stream.events.at(-1);
  expect(result?.event, JSON.stringify(result)).toBe("result");
  const data = result?.data.data as { insights: Insight[] };
  return { id: stream.headers.get("x-analysis-id") as string, insights: data.insights };
}

async function page(token: string, url: string, query: Record<string, string | number> = {}): Promise<Page> {
  const res = await h.http.get(url).query(query).set(auth(token));
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as Page;
}

/** Every page of an insight's sources, following next_cursor. */
async function allSources(token: string, url: string, query: Record<string, string | number> = {}, between?: () => Promise<void>) {
  const pages: Page[] = [];
  let cursor: string | null = null;
  do {
    const p: Page = await page(token, url, { ...query, ...(cursor ? { cursor } : {}) });
    pages.push(p);
    expect(p.has_more).toBe(p.next_cursor !== null);
    cursor = p.next_cursor;
    if (cursor) await between?.();
  } while (cursor && pages.length < 200);
  return { first: pages[0] as Page, items: pages.flatMap((p) => p.sources) };
}

const originals = async (ids: string[]) =>
  new Map((await h.deps.db.content.findMany({ where: { id: { in: ids } } })).map((c) => [c.id, c]));

/** The stored original between code-point offsets. */
const slice = (text: string, start: number, end: number) => Array.from(text).slice(start, end).join("");

beforeAll(async () => {
  h = await createHarness();
  ({ baseUrl: base, close: closeServer } = await listen(h));
  tenant = await createTenant(h, "Acme Notes");
  stranger = await createTenant(h, "Globex");
  h.startWorkers({ "analysis.run.v1": analysisProcessor });
}, 60_000);
afterAll(async () => {
  await closeServer?.();
  await h?.close();
});

describe("an analysis whose sample is its whole scope", () => {
  let analysis: { id: string; insights: Insight[] };
  let ids: string[];

  beforeAll(async () => {
    ids = await storeSources(h, tenant, corpus(7, 120));
    await enrich(h, ids);
    analysis = await analyse(tenant, { question: "What do people complain about and praise?", entity_id: tenant.entityId, depth: "deep" });
    expect(analysis.insights.length).toBeGreaterThan(2);
  }, 60_000);

  it("gives every insight an id and a link to its sources", () => {
    for (const [k, insight] of analysis.insights.entries()) {
      expect(insight.id).toBe(k + 1);
      expect(insight.sources_url).toBe(`/agent/v1/analysis/${analysis.id}/insights/${k + 1}/sources`);
    }
  });

  it("lists as many sources as each insight states, each once, with its best statement verbatim", async () => {
    for (const insight of analysis.insights) {
      const { first, items } = await allSources(tenant.token, insight.sources_url, { limit: 7 });
      const listed = items.map((i) => i.content_id);
      expect(new Set(listed).size, insight.title).toBe(listed.length);
      expect(listed.length, insight.title).toBe(insight.sources);
      expect(first).toMatchObject({
        total: insight.sources,
        sample: insight.sources,
        listed: insight.sources,
        complete: true,
        unavailable: 0,
      });
      // The quoted sources first, in the insight's order, each with its quote's number.
      const quoted = [...new Set(insight.evidence.map((e) => e.content_id))];
      expect(listed.slice(0, quoted.length)).toEqual(quoted);
      for (const e of insight.evidence) expect(items.find((i) => i.content_id === e.content_id)?.evidence_number).toBeDefined();
      const stored = await originals(listed);
      for (const item of items) {
        const c = stored.get(item.content_id);
        expect(c, item.content_id).toBeDefined();
        expect(item.quote.length).toBeGreaterThan(0);
        expect(slice(c?.content ?? "", item.start_offset, item.end_offset)).toBe(item.quote);
        expect(item).toMatchObject({ title: c?.title, platform: c?.platform, author: c?.author, url: c?.url, in_sample: true });
        expect(item.published_at).toBe(c?.publishedAt?.toISOString() ?? null);
      }
      // The same sources newest first.
      const newest = (await allSources(tenant.token, insight.sources_url, { sort: "newest", limit: 5 })).items;
      expect(newest.map((i) => i.content_id).sort()).toEqual([...listed].sort());
      const times = newest.map((i) => Date.parse(i.published_at as string));
      expect(times).toEqual([...times].sort((a, b) => b - a));
    }
  });

  it("answers 404 to another workspace, reads for a viewer, and refuses an insight id that is not one", async () => {
    const url = analysis.insights[0]?.sources_url as string;
    const foreign = await h.http.get(url).set(auth(stranger.token));
    expect(foreign.status).toBe(404);
    expect(foreign.body.code).toBe("not_found");
    expect(JSON.stringify(foreign.body)).not.toContain(ids[0]);
    const viewer = await addMember(h, { ...tenant, workspaceId: tenant.workspaceId } as never, "viewer");
    expect((await h.http.get(url).set(auth(viewer.token))).status).toBe(200);
    const beyond = await h.http
      .get(`/agent/v1/analysis/${analysis.id}/insights/${analysis.insights.length + 1}/sources`)
      .set(auth(tenant.token));
    expect(beyond.status).toBe(404);
    for (const bad of ["0", "x", "-1", "1.5"]) {
      const res = await h.http.get(`/agent/v1/analysis/${analysis.id}/insights/${bad}/sources`).set(auth(tenant.token));
      expect(res.status, bad).toBe(422);
      expect(res.body.detail[0].loc).toEqual(["path", "n"]);
    }
    expect((await h.http.get(`/agent/v1/analysis/${randomUUID()}/insights/1/sources`).set(auth(tenant.token))).status).toBe(404);
    const wrong = await h.http.get(url).query({ cursor: "not-a-cursor" }).set(auth(tenant.token));
    expect(wrong.status).toBe(422);
  });
});

describe("sources deleted or erased after the analysis", () => {
  let analysis: { id: string; insights: Insight[] };

  beforeAll(async () => {
    const ids = await storeSources(h, tenant, corpus(13, 60), await addEntity(h, tenant, "Acme Tasks"));
    await enrich(h, ids);
    const entityId = (await h.deps.db.content.findUniqueOrThrow({ where: { id: ids[0] as string } })).entityId;
    analysis = await analyse(tenant, { question: "What do people complain about and praise?", entity_id: entityId, depth: "deep" });
  }, 60_000);

  it("lists them as unavailable, without their words, and still as many as the insight states", async () => {
    const insight = analysis.insights.find((i) => i.sources >= 4) as Insight;
    expect(insight).toBeDefined();
    const before = (await allSources(tenant.token, insight.sources_url)).items;
    const quoted = new Set(insight.evidence.map((e) => e.content_id));
    const [deleted, erased] = before.filter((i) => !quoted.has(i.content_id)) as [Item, Item];
    expect((await h.http.delete(`/agent/v1/content/${deleted.content_id}`).set(auth(tenant.token))).status).toBe(200);
    const erasure = await h.http
      .post(`/api/workspaces/${tenant.workspaceId}/erasures`)
      .set(auth(tenant.token))
      .send({ platform: erased.platform, author: erased.author });
    expect(erasure.status, JSON.stringify(erasure.body)).toBe(200);
    // Every listed source of that author on that platform went with the erasure.
    const erasedIds = new Set(before.filter((i) => i.author === erased.author && i.platform === erased.platform).map((i) => i.content_id));

    const { first, items } = await allSources(tenant.token, insight.sources_url, { limit: 3 });
    expect(items.map((i) => i.content_id)).toEqual(before.map((i) => i.content_id));
    expect(items.length).toBe(insight.sources);
    const gone = items.filter((i) => i.unavailable);
    expect(gone.length).toBe(erasedIds.size + 1);
    expect(first).toMatchObject({ total: insight.sources, unavailable: gone.length, complete: true });
    expect(first.count_basis).toMatch(/deleted or erased since the analysis ran/);
    for (const item of gone) {
      expect(item).toMatchObject({ title: "", quote: "", url: "", author: "", published_at: null, opinion_unit_id: null });
      expect(item.unavailable?.reason).toBe(item.content_id === deleted.content_id ? "deleted" : "author_erased");
    }
    const text = JSON.stringify(items);
    for (const item of before.filter((i) => erasedIds.has(i.content_id) || i.content_id === deleted.content_id)) {
      expect(text).not.toContain(item.title);
    }
    expect(text).not.toContain(`"${erased.author}"`);
  });
});

describe("an analysis whose scope holds more than its sample", () => {
  let analysis: { id: string; insights: Insight[] };
  let entityId: string;

  interface ThemeRow {
    insight: number;
    side: string;
    focus: string;
    phrases: string[];
    sources: number;
    sample_sources: number;
  }
  const themeRows = async () =>
    h.deps.db.$queryRaw<ThemeRow[]>`
      SELECT insight, side, focus, phrases, sources, sample_sources FROM analysis_themes
      WHERE analysis_id = ${analysis.id}::uuid ORDER BY insight`;

  /**
   * The sources in scope whose stored statements name one of `names` on `side` (worked out from every
   * stored unit of the entity, apart from the service's statements), and the largest such count of one name.
   */
  async function matching(names: string[], side: string) {
    const units = await h.deps.db.opinionUnit.findMany({ where: { entityId } });
    const takes = (u: (typeof units)[number]) => {
      const complaint = u.kind !== "request" && (u.kind === "bug" || u.sentimentLabel === "negative");
      const praise = !["request", "bug"].includes(u.kind) && u.sentimentLabel === "positive";
      const request = u.kind === "request";
      return { complaint, praise, request, any: true };
    };
    const per = (name: string) => {
      const bySource = new Map<string, ReturnType<typeof takes>[]>();
      for (const u of units) {
        if (u.aspect !== name && !(u.terms ?? []).includes(name)) continue;
        bySource.set(u.contentId, [...(bySource.get(u.contentId) ?? []), takes(u)]);
      }
      return new Set(
        [...bySource.entries()]
          .filter(([, sides]) =>
            side === "neutral"
              ? !sides.some((s) => s.complaint || s.praise || s.request)
              : sides.some((s) => s[side as "complaint" | "praise" | "request" | "any"]),
          )
          .map(([id]) => id),
      );
    };
    const sets = names.map(per);
    return { union: new Set(sets.flatMap((s) => [...s])), largest: Math.max(0, ...sets.map((s) => s.size)) };
  }

  beforeAll(async () => {
    entityId = await addEntity(h, tenant, "Acme Calendar");
    const ids = await storeSources(h, tenant, corpus(21, 160), entityId);
    await enrich(h, ids);
    // A brief analysis reads 50 of the 160.
    analysis = await analyse(tenant, { question: "What do people complain about?", entity_id: entityId, depth: "brief" });
    expect(analysis.insights.length).toBeGreaterThan(0);
  }, 60_000);

  it("lists the sample's sources, then exactly the scope's sources the count matched, and says why the numbers differ", async () => {
    const rows = await themeRows();
    expect(rows.map((r) => r.insight)).toEqual(analysis.insights.map((i) => i.id));
    let lazy = 0;
    let beyond = 0;
    for (const insight of analysis.insights) {
      const row = rows[insight.id - 1] as ThemeRow;
      const { first, items } = await allSources(tenant.token, insight.sources_url, { limit: 9 });
      const listed = items.map((i) => i.content_id);
      expect(new Set(listed).size, insight.title).toBe(listed.length);
      const sample = items.filter((i) => i.in_sample);
      expect(sample.length).toBe(row.sample_sources);
      // The sample first.
      expect(items.slice(0, sample.length).every((i) => i.in_sample)).toBe(true);
      expect(first.total).toBe(insight.sources);
      if (row.phrases.length === 0) {
        expect(first).toMatchObject({ complete: true, listed: insight.sources });
        expect(listed.length).toBe(insight.sources);
        continue;
      }
      lazy++;
      expect(first).toMatchObject({ complete: false, listed: null });
      expect(first.count_basis).toMatch(/larger of two numbers/);
      const { union, largest } = await matching(row.phrases, row.side);
      // The count stated: the larger of the sample's and the largest count of one phrase over the scope.
      expect(insight.sources).toBe(Math.max(row.sample_sources, largest));
      // The rest of the list: every matching source of the scope that is not the sample's, newest first.
      const rest = items.filter((i) => !i.in_sample);
      beyond += rest.length;
      expect(new Set(rest.map((i) => i.content_id))).toEqual(new Set([...union].filter((id) => !sample.some((s) => s.content_id === id))));
      const times = rest.map((i) => Date.parse(i.published_at as string));
      expect(times).toEqual([...times].sort((a, b) => b - a));
      expect(listed.length).toBeGreaterThanOrEqual(insight.sources);
      const stored = await originals(listed);
      for (const item of rest) {
        expect(slice(stored.get(item.content_id)?.content ?? "", item.start_offset, item.end_offset)).toBe(item.quote);
        expect(item.quote.length).toBeGreaterThan(0);
      }
      // Newest first: the same sources in one order.
      const newest = (await allSources(tenant.token, insight.sources_url, { sort: "newest", limit: 8 })).items;
      expect(newest.map((i) => i.content_id).sort()).toEqual([...listed].sort());
      const all = newest.map((i) => Date.parse(i.published_at as string));
      expect(all).toEqual([...all].sort((a, b) => b - a));
    }
    expect(lazy).toBeGreaterThan(0);
    expect(beyond).toBeGreaterThan(0);
  });

  it("finds the rest of the scope's sources alike along the units' seen index and by name, page after page", async () => {
    const rows = await h.deps.db.$queryRaw<(ScopeThemeRow & { insight: number })[]>`
      SELECT insight, aspect, side, focus, phrases, sources, sample_sources, entity_ids, platforms, exclude_first_party, as_of,
        scope_sources
      FROM analysis_themes WHERE analysis_id = ${analysis.id}::uuid AND cardinality(phrases) > 0`;
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) {
      expect(row.scope_sources).toBe(160);
      const ref = { analysisId: analysis.id, n: row.insight, theme: row, workspaceId: tenant.workspaceId };
      const pages: Record<string, string[][]> = { seen: [], name: [] };
      for (const way of ["seen", "name"] as const) {
        let after: { seenAt: Date; id: string } | null = null;
        for (;;) {
          const page: Awaited<ReturnType<typeof scopeRest>> = await scopeRest(h.deps.db, ref, after, 4, way);
          pages[way]?.push(page.map((l) => l.contentId));
          const last = page.at(-1);
          if (page.length < 4 || !last) break;
          after = { seenAt: last.seenAt, id: last.contentId };
        }
      }
      expect(pages.name).toEqual(pages.seen);
    }
  });

  it("keeps its pages stable while more sources are stored and enriched", async () => {
    const rows = await themeRows();
    const insight = analysis.insights.find((i) => (rows[i.id - 1]?.phrases.length ?? 0) > 0) as Insight;
    for (const sort of ["representative", "newest"]) {
      const before = (await allSources(tenant.token, insight.sources_url, { sort })).items.map((i) => i.content_id);
      let round = 0;
      const during = (
        await allSources(tenant.token, insight.sources_url, { sort, limit: 6 }, async () => {
          // More of the same feedback, published across the same months, between every two pages.
          const more = await storeSources(h, tenant, corpus(100 + round++, 8), entityId);
          await enrich(h, more);
        })
      ).items.map((i) => i.content_id);
      expect(round).toBeGreaterThan(2);
      expect(during).toEqual(before);
    }
    // A new analysis counts them.
    const again = await analyse(tenant, { question: "What do people complain about?", entity_id: entityId, depth: "brief" });
    expect(again.insights.length).toBeGreaterThan(0);
  }, 60_000);
});
