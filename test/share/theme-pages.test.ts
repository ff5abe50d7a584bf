import { parseHTML } from "linkedom";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTenant, storeSources } from "../analysis/fixtures.js";
import { runAnalysis } from "../analysis/sse-client.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { buildSharedWorld, type SharedWorld, share } from "./fixtures.js";

/**
 * A shared analysis's themes (`/share/{token}/insights/{n}`): each insight of the shared page links to
 * the page of every source behind it, under the same token, with the API's sources as quote cards,
 * paged and in either order. The token opens the themes of its own analysis and nothing else: not
 * another analysis's, not through a link of another kind, not once revoked. Real HTTP, PostgreSQL,
 * Redis and workers.
 */
let h: Harness;
let w: SharedWorld;
const auth = (token: string) => ({ Authorization: `Bearer ${token}` });
const pathOf = (url: string) => new URL(url).pathname;

beforeAll(async () => {
  h = await createHarness();
  w = await buildSharedWorld(h);
}, 90_000);
afterAll(async () => {
  await w?.close();
  await h?.close();
});

const open = async (path: string, method = "GET") => {
  const res = await fetch(`${w.baseUrl}${path}`, { method, redirect: "manual" });
  return { status: res.status, headers: res.headers, doc: parseHTML(await res.text()).document };
};

interface Insight {
  id: number;
  title: string;
  sources: number;
  sources_url: string;
}
interface Source {
  content_id: string;
  quote: string;
  title: string;
  url: string;
  unavailable?: unknown;
}

async function insightsOf(analysisId: string): Promise<Insight[]> {
  const res = await h.http.get(`/agent/v1/analysis/${analysisId}`).set(auth(w.tenant.token)).expect(200);
  return res.body.result.data.insights as Insight[];
}

async function sourcesOf(url: string, query: Record<string, string> = {}): Promise<Source[]> {
  const out: Source[] = [];
  let cursor: string | null = null;
  do {
    const res: { body: { sources: Source[]; next_cursor: string | null } } = await h.http
      .get(url)
      .query({ ...query, limit: "200", ...(cursor ? { cursor } : {}) })
      .set(auth(w.tenant.token))
      .expect(200);
    out.push(...(res.body.sources as Source[]));
    cursor = res.body.next_cursor;
  } while (cursor);
  return out;
}

const cards = (doc: ReturnType<typeof parseHTML>["document"]) => [...doc.querySelectorAll("#sources figure.quote")];

describe("a shared analysis's themes", () => {
  it("links each theme to the page of its sources, which shows the API's sources as quote cards", async () => {
    const link = await share(h, w.tenant.token, "analysis", w.analysisId);
    const { doc } = await open(pathOf(link.url));
    const insights = await insightsOf(w.analysisId);
    expect(insights.length).toBeGreaterThan(0);
    for (const insight of insights) {
      const a = doc.querySelector(`#insight-${insight.id} a.all-sources`);
      expect(a?.getAttribute("href")).toBe(`${pathOf(link.url)}/insights/${insight.id}`);
      const page = await open(a?.getAttribute("href") as string);
      expect(page.status).toBe(200);
      expect(page.headers.get("content-security-policy")).toMatch(/default-src 'none'/);
      expect(page.headers.get("referrer-policy")).toBe("no-referrer");
      expect(page.headers.get("cache-control")).toBe("no-store");
      expect(page.doc.querySelector("h1")?.textContent).toBe(insight.title);
      const sources = await sourcesOf(insight.sources_url);
      expect(sources.length).toBe(insight.sources);
      const shown = cards(page.doc);
      expect(shown.length).toBe(sources.length);
      for (const [i, s] of sources.entries()) expect(shown[i]?.querySelector("blockquote")?.textContent).toBe(s.quote);
      // Back to the theme on the analysis's page.
      expect(page.doc.querySelector(`a[href="${pathOf(link.url)}#insight-${insight.id}"]`)).not.toBeNull();
    }
  });

  it("pages through a theme's sources, in either order, by its own links", async () => {
    // Sixty sources of one complaint, more than a page holds.
    const tenant = await createTenant(h, "Acme Mail");
    await storeSources(
      h,
      tenant,
      Array.from({ length: 60 }, (_, i) => ({
        platform: "reddit",
        author: `writer${i}`,
        content: `Sync keeps failing on my phone, attempt ${i}. The sync lost my drafts.`,
        published_at: new Date(Date.UTC(2026, 2, 1) + i * 3_600_000).toISOString(),
      })),
    );
    await runAnalysis(w.baseUrl, tenant, "What do users complain about?", "deep");
    const analysis = await h.deps.db.analysis.findFirstOrThrow({ where: { entityId: tenant.entityId }, orderBy: { createdAt: "desc" } });
    const res = await h.http.get(`/agent/v1/analysis/${analysis.id}`).set(auth(tenant.token)).expect(200);
    const insight = (res.body.result.data.insights as Insight[]).find((i) => i.sources > 50) as Insight;
    expect(insight).toBeDefined();
    const link = await share(h, tenant.token, "analysis", analysis.id);
    for (const sort of ["representative", "newest"]) {
      const first = `${pathOf(link.url)}/insights/${insight.id}${sort === "newest" ? "?sort=newest" : ""}`;
      const one = await open(first);
      expect(one.status).toBe(200);
      expect(cards(one.doc)).toHaveLength(50);
      expect(one.doc.querySelector('nav.toc a[aria-current="page"]')?.textContent).toBe(
        sort === "newest" ? "Newest first" : "Most representative first",
      );
      const next = one.doc.querySelector('a[rel="next"]')?.getAttribute("href") as string;
      expect(next).toMatch(new RegExp(`^${pathOf(link.url)}/insights/${insight.id}\\?${sort === "newest" ? "sort=newest&" : ""}cursor=`));
      const two = await open(next);
      expect(two.status).toBe(200);
      expect(cards(two.doc)).toHaveLength(insight.sources - 50);
      expect(two.doc.querySelector('a[rel="next"]')).toBeNull();
      expect(two.doc.querySelector("nav.pager a")?.getAttribute("href")).toBe(first);
      const shown = [...cards(one.doc), ...cards(two.doc)].map((f) => f.querySelector("blockquote")?.textContent);
      const api = await h.http.get(insight.sources_url).query({ sort, limit: "200" }).set(auth(tenant.token)).expect(200);
      expect(shown).toEqual((api.body.sources as Source[]).map((s) => s.quote));
    }
  }, 60_000);

  it("opens only the themes of its own analysis, and nothing once revoked", async () => {
    const insights = await insightsOf(w.analysisId);
    const link = await share(h, w.tenant.token, "analysis", w.analysisId);
    const base = pathOf(link.url);
    // Another analysis of the same workspace, shared by a link of its own: each token shows its own theme.
    await runAnalysis(w.baseUrl, w.tenant, "What do users praise?", "brief");
    const other = await h.deps.db.analysis.findFirstOrThrow({ where: { entityId: w.tenant.entityId }, orderBy: { createdAt: "desc" } });
    const otherInsights = await insightsOf(other.id);
    const otherLink = await share(h, w.tenant.token, "analysis", other.id);
    expect((await open(`${base}/insights/1`)).doc.querySelector("h1")?.textContent).toBe(insights[0]?.title);
    expect((await open(`${pathOf(otherLink.url)}/insights/1`)).doc.querySelector("h1")?.textContent).toBe(otherInsights[0]?.title);

    for (const bad of [
      `${base}/insights/${insights.length + 1}`,
      `${base}/insights/0`,
      `${base}/insights/x`,
      `${base}/insights/1?sort=oldest`,
      `${base}/insights/1?cursor=nonsense`,
      `${base}/insights/1?sort=newest&cursor=${Buffer.from(JSON.stringify(["r", 3])).toString("base64url")}`,
    ]) {
      const res = await open(bad);
      expect(res.status, bad).toBe(404);
      expect(res.doc.querySelector("h1")?.textContent).toMatch(/not valid/);
    }
    // Links to a knowledge record or an entity have no themes.
    for (const [resource, id] of [
      ["knowledge_record", w.insightId],
      ["entity", w.tenant.entityId],
    ] as const) {
      const l = await share(h, w.tenant.token, resource, id);
      expect((await open(`${pathOf(l.url)}/insights/1`)).status).toBe(404);
    }
    const post = await open(`${base}/insights/1`, "POST");
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("GET, HEAD");

    await h.http.delete(`/api/share-links/${link.id}`).set(auth(w.tenant.token)).expect(204);
    expect((await open(`${base}/insights/1`)).status).toBe(404);
    expect((await open(`${pathOf(otherLink.url)}/insights/1`)).status).toBe(200);
  }, 60_000);

  it("shows a source deleted since as gone, without its words", async () => {
    const insights = await insightsOf(w.analysisId);
    const insight = insights.find((i) => i.sources >= 2) as Insight;
    const sources = await sourcesOf(insight.sources_url);
    const doomed = sources.at(-1) as Source;
    await h.http.delete(`/agent/v1/content/${doomed.content_id}`).set(auth(w.tenant.token)).expect(200);
    const link = await share(h, w.tenant.token, "analysis", w.analysisId);
    const page = await open(`${pathOf(link.url)}/insights/${insight.id}`);
    expect(cards(page.doc)).toHaveLength(insight.sources);
    const text = page.doc.querySelector("main")?.textContent ?? "";
    expect(text).toMatch(/The source of this quote was deleted/);
    // Its url names only it (each stored source has its own).
    expect(page.doc.toString()).not.toContain(doomed.url);
  });
});
