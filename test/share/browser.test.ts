import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { submitAnalysis } from "../../src/insights/analysis/jobs.js";
import { RunBody } from "../../src/insights/analysis/schemas.js";
import { axeAudit, launchBrowser, openPage, screenshot, seriousOf, type WatchedPage } from "../helpers/browser.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { analysisProcessor, buildSharedWorld, type SharedWorld, share } from "./fixtures.js";

/**
 * The shared pages in a real browser (the system's headless Chromium): each page kind opened
 * through its share link on a running service shows what the API answers, its citation links
 * land on their quotes, a running analysis completes live, nothing errs in the console or fails
 * to load, axe-core finds no serious or critical WCAG 2.1 AA violation, a phone-width screen needs
 * no sideways scrolling, and a screenshot of each page is kept in test-results/pages/.
 */
let h: Harness;
let w: SharedWorld;
let browser: Browser;
const auth = (token: string) => ({ Authorization: `Bearer ${token}` });
/** The link's page on the listening service (the API answered it to a request made without a listening port). */
const onService = (url: string) => `${w.baseUrl}${new URL(url).pathname}`;

beforeAll(async () => {
  h = await createHarness();
  w = await buildSharedWorld(h);
  browser = await launchBrowser();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await w?.close();
  await h?.close();
});

interface Evidence {
  number: number;
  quote: string;
  url: string;
  platform: string;
}
interface Insight {
  title: string;
  sources: number;
  evidence: Evidence[];
}

/** Opens the URL, checks it in full, and hands the page to `more` before closing it. */
async function visit(url: string, name: string, more: (p: WatchedPage) => Promise<void>) {
  const watched = await openPage(browser);
  try {
    const res = await watched.page.goto(url);
    expect(res?.status()).toBe(200);
    await more(watched);
    expect(seriousOf(await axeAudit(watched.page))).toEqual([]);
    await screenshot(watched.page, name);
    // A phone-width screen: nothing wider than the screen.
    await watched.page.setViewportSize({ width: 375, height: 800 });
    const overflow = Number(await watched.page.evaluate("document.documentElement.scrollWidth - window.innerWidth"));
    expect(overflow).toBeLessThanOrEqual(0);
    await screenshot(watched.page, `${name}-phone`);
    expect(watched.errors).toEqual([]);
    expect(watched.failed).toEqual([]);
  } finally {
    await watched.close();
  }
}

describe("pages in a browser", () => {
  it("shows an analysis as the API answers it, with citations that land on their quotes", async () => {
    const api = await h.http.get(`/agent/v1/analysis/${w.analysisId}`).set(auth(w.tenant.token)).expect(200);
    const data = api.body.result.data as { answer: string; insights: Insight[]; evidence: Evidence[]; coverage: Record<string, unknown> };
    expect(data.insights.length).toBeGreaterThan(0);
    const link = await share(h, w.tenant.token, "analysis", w.analysisId);

    await visit(onService(link.url), "analysis", async ({ page }) => {
      expect(await page.locator("h1").textContent()).toContain(api.body.question);
      const text = (await page.locator("main").textContent()) ?? "";
      for (const insight of data.insights) {
        expect(text).toContain(insight.title);
        for (const e of insight.evidence) expect(text).toContain(e.quote);
      }
      // The chart has a bar per theme, labelled.
      const chart = page.locator("svg[role=img]").first();
      expect(await chart.count()).toBe(1);
      for (const platform of Object.keys(data.coverage)) expect(text).toContain(platform);
      // Each quote links to its original, outside the page.
      const first = data.evidence[0] as Evidence;
      expect(await page.locator(`#q-${first.number} a[href="${first.url}"]`).count()).toBe(1);

      // Follow a citation of the answer to its quote.
      const cited = page.locator('a[href^="#q-"]').first();
      const target = (await cited.getAttribute("href")) as string;
      await cited.click();
      expect(new URL(page.url()).hash).toBe(target);
      const quote = page.locator(target);
      await expect.poll(() => quote.isVisible()).toBe(true);
      const number = Number(target.slice(3));
      expect(await quote.textContent()).toContain(data.evidence.find((e) => e.number === number)?.quote);
    });
  });

  it("opens a theme's every source from the analysis's page, under the same link, as the API lists them", async () => {
    const api = await h.http.get(`/agent/v1/analysis/${w.analysisId}`).set(auth(w.tenant.token)).expect(200);
    const insight = (api.body.result.data.insights as (Insight & { id: number; sources_url: string })[])[0] as Insight & {
      id: number;
      sources_url: string;
    };
    const listed = await h.http.get(insight.sources_url).set(auth(w.tenant.token)).expect(200);
    const sources = listed.body.sources as { quote: string; url: string }[];
    const link = await share(h, w.tenant.token, "analysis", w.analysisId);
    const watched = await openPage(browser);
    try {
      await watched.page.goto(onService(link.url));
      await watched.page.locator(`#insight-${insight.id} a.all-sources`).click();
      await watched.page.waitForURL(/\/insights\/\d+$/);
      expect(new URL(watched.page.url()).pathname).toBe(`${new URL(link.url).pathname}/insights/${insight.id}`);
    } finally {
      await watched.close();
    }
    await visit(`${onService(link.url)}/insights/${insight.id}`, "theme-sources", async ({ page }) => {
      expect(await page.locator("h1").textContent()).toBe(insight.title);
      expect(await page.locator("#sources figure").count()).toBe(insight.sources);
      const quotes = await page.locator("#sources blockquote").allTextContents();
      expect(quotes).toEqual(sources.map((s) => s.quote));
      const first = sources[0] as { url: string };
      expect(await page.locator(`#sources a[href="${first.url}"]`).count()).toBe(1);
      // Newest first, by its link.
      await page.locator("nav.toc a", { hasText: "Newest first" }).click();
      await page.waitForURL(/sort=newest/);
      expect(await page.locator('nav.toc a[aria-current="page"]').textContent()).toBe("Newest first");
      expect(await page.locator("#sources figure").count()).toBe(insight.sources);
    });
  });

  it("works without JavaScript and prints without its navigation, writing out where external links go", async () => {
    const link = await share(h, w.tenant.token, "analysis", w.analysisId);
    const watched = await openPage(browser, { javaScript: false });
    try {
      await watched.page.goto(onService(link.url));
      const cited = watched.page.locator('a[href^="#q-"]').first();
      const target = (await cited.getAttribute("href")) as string;
      await cited.click();
      expect(new URL(watched.page.url()).hash).toBe(target);
      expect(await watched.page.locator(target).isVisible()).toBe(true);

      await watched.page.emulateMedia({ media: "print" });
      expect(await watched.page.locator("nav").first().isVisible()).toBe(false);
      const after = await watched.page
        .locator("a.external")
        .first()
        .evaluate(
          (a) =>
            (globalThis as unknown as { getComputedStyle: (e: unknown, p: string) => { content: string } }).getComputedStyle(a, "::after")
              .content,
        );
      expect(after).toMatch(/https:\/\/example\.com\/feedback\//);
      await screenshot(watched.page, "analysis-print");
      expect(watched.errors).toEqual([]);
      expect(watched.failed).toEqual([]);
    } finally {
      await watched.close();
    }
  });

  it("shows a knowledge record with its history and the captured text around each quote", async () => {
    const link = await share(h, w.tenant.token, "knowledge_record", w.insightId);
    await visit(onService(link.url), "knowledge-record", async ({ page }) => {
      expect(await page.locator("h1").textContent()).toContain("Sync is the top complaint");
      expect(await page.locator("mark").first().textContent()).toBe(w.recordQuote);
      const text = (await page.locator("main").textContent()) ?? "";
      expect(text).toContain("Users on Android report that sync fails every time.");
      // The snapshot text around the quote: the rest of the cited original.
      expect(text).toContain("Sync is unreliable.");
      // Both revisions in the history.
      expect(await page.locator("table:has(th:text-is('Revision')) tbody tr").count()).toBe(2);
    });
  });

  it("shows an entity's summary: volume over time, top themes and coverage", async () => {
    const summary = await h.http.get(`/agent/v1/intelligence/summary?entity_id=${w.tenant.entityId}`).set(auth(w.tenant.token)).expect(200);
    const link = await share(h, w.tenant.token, "entity", w.tenant.entityId);
    await visit(onService(link.url), "entity", async ({ page }) => {
      expect(await page.locator("h1").textContent()).toContain("Acme Notes");
      expect(await page.locator("svg[role=img] polyline, svg[role=img] path").count()).toBeGreaterThan(0);
      const text = (await page.locator("main").textContent()) ?? "";
      for (const theme of summary.body.themes as { label: string }[]) expect(text).toContain(theme.label);
      for (const platform of summary.body.platforms as { platform: string }[]) expect(text).toContain(platform.platform);
      expect(text).toContain("What do users complain about and what do they ask for?");
    });
  });

  it("shows a running analysis's progress live, then its result", async () => {
    // No analysis worker runs until the page is open.
    await w.analysisWorkers.close();
    const { analysis } = await submitAnalysis(
      h.deps,
      w.tenant.userId,
      RunBody.parse({ question: "What do users say about sync?", entity_id: w.tenant.entityId, depth: "brief" }),
    );
    const link = await share(h, w.tenant.token, "analysis", analysis.id);
    const watched = await openPage(browser);
    try {
      await watched.page.goto(onService(link.url));
      const row = await h.deps.db.analysis.findUniqueOrThrow({ where: { id: analysis.id } });
      expect(row.status, (await watched.page.content()).slice(0, 3000)).toBe("queued");
      expect(await watched.page.locator("[data-events]").count()).toBe(1);
      expect(await watched.page.locator("progress").count()).toBe(1);
      h.startWorkers({ "analysis.run.v1": analysisProcessor });
      // The page reloads itself with the finished analysis once the result event arrives.
      await watched.page.waitForSelector("a[href^='#q-']", { timeout: 30_000 });
      expect(await watched.page.locator("[data-events]").count()).toBe(0);
      expect(await watched.page.locator("h1").textContent()).toContain("What do users say about sync?");
      await screenshot(watched.page, "analysis-live-finished");
      expect(watched.errors).toEqual([]);
      expect(watched.failed).toEqual([]);
    } finally {
      await watched.close();
    }
  }, 60_000);

  it("shows a plain not-found page for a revoked link", async () => {
    const link = await share(h, w.tenant.token, "entity", w.tenant.entityId);
    await h.http.delete(`/api/share-links/${link.id}`).set(auth(w.tenant.token)).expect(204);
    const watched = await openPage(browser);
    try {
      const res = await watched.page.goto(onService(link.url));
      expect(res?.status()).toBe(404);
      expect(await watched.page.locator("h1").textContent()).toMatch(/not valid/i);
      expect(seriousOf(await axeAudit(watched.page))).toEqual([]);
      expect(watched.errors.filter((e) => !e.includes("404"))).toEqual([]);
    } finally {
      await watched.close();
    }
  });
});
