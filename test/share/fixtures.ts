import { randomUUID } from "node:crypto";
import { analysisProcessor } from "../../workers/analysis.js";
import { enrichmentProcessor } from "../../workers/enrichment.js";
import type { WorkerHandles } from "../../workers/runtime.js";
import { createTenant, storeSources, type Tenant, waitFor } from "../analysis/fixtures.js";
import { listen, runAnalysis } from "../analysis/sse-client.js";
import type { Harness } from "../helpers/harness.js";

/**
 * A tracked product with stored feedback on three platforms, a finished deep analysis of it and a
 * knowledge record with two revisions: what the share-link API tests and the browser tests open.
 * Everything is arranged through the real API, with the analysis and enrichment workers running.
 */
export interface SharedWorld {
  tenant: Tenant;
  baseUrl: string;
  close: () => Promise<void>;
  contentIds: string[];
  analysisId: string;
  insightId: string;
  /** The verbatim quote the knowledge record cites. */
  recordQuote: string;
  /** The analysis workers (stopped, then started again, to watch an analysis run). */
  analysisWorkers: WorkerHandles;
}

const DAY = 86_400_000;
const daysAgo = (n: number) => new Date(Date.now() - n * DAY).toISOString();

export const FEEDBACK = [
  { platform: "reddit", author: "mira", content: "Sync is broken again after the update. Terrible sync, I lost two notes." },
  { platform: "reddit", author: "jonas", content: "Sync keeps failing on my phone. The sync is so slow it is useless." },
  {
    platform: "github",
    author: "kwame",
    title: "Sync fails on Android",
    content: "Sync fails every time on Android 14. Sync is unreliable.",
  },
  {
    platform: "web",
    author: "The Verge",
    title: "Acme Notes review",
    content: "The editor is fast and clean. Reviewers love the editor.",
  },
  { platform: "reddit", author: "li", content: "I love the editor, it is fast and clean and the search is great." },
  {
    platform: "github",
    author: "sam",
    title: "Export to PDF",
    content: "Please add PDF export. It would be great to export notes to PDF.",
  },
  { platform: "reddit", author: "ana", content: "Could you add PDF export? I need to send notes to clients as PDF." },
  { platform: "github", author: "olu", title: "Pricing", content: "The pricing is too expensive for a small team. Pricing went up again." },
  { platform: "reddit", author: "pat", content: "Way too expensive now, the pricing is not worth it for what you get." },
  {
    platform: "hackernews",
    author: "TechCrunch",
    content: "Search is great and the editor is fast, users say, though sync is unreliable.",
  },
];

export async function buildSharedWorld(h: Harness): Promise<SharedWorld> {
  const tenant = await createTenant(h, "Acme Notes");
  const { baseUrl, close } = await listen(h);
  h.startWorkers({ "enrichment.content.v1": enrichmentProcessor });
  const analysisWorkers = h.startWorkers({ "analysis.run.v1": analysisProcessor });
  const contentIds = await storeSources(
    h,
    tenant,
    FEEDBACK.map((f, i) => ({ ...f, url: `https://example.com/feedback/${i}`, published_at: daysAgo(1 + (i % 9)) })),
  );
  await waitFor(
    async () =>
      (await h.deps.db.content.count({ where: { id: { in: contentIds }, enrichment: { enrichedAt: { not: null } } } })) ===
      contentIds.length
        ? true
        : undefined,
    30_000,
    "enrichment",
  );
  await runAnalysis(baseUrl, tenant, "What do users complain about and what do they ask for?", "deep");
  const analysis = await h.deps.db.analysis.findFirstOrThrow({ where: { entityId: tenant.entityId }, orderBy: { createdAt: "desc" } });

  const recordQuote = "Sync fails every time on Android 14.";
  const write = (revision: number, summary: string) => ({
    entity_id: tenant.entityId,
    request_id: randomUUID(),
    title: "Sync is the top complaint",
    summary,
    evidence: [{ content_id: contentIds[2], quote: recordQuote }],
    tags: ["sync"],
    limitations: ["Ten sources only."],
    expected_revision: revision,
  });
  const created = await h.http
    .post("/agent/v1/knowledge/insights")
    .set({ Authorization: `Bearer ${tenant.token}` })
    .send(write(0, "Users report sync failures."));
  if (created.status !== 201) throw new Error(`record create failed: ${created.status} ${JSON.stringify(created.body)}`);
  const insightId = created.body.record?.id ?? created.body.id;
  const revised = await h.http
    .put(`/agent/v1/knowledge/insights/${insightId}`)
    .set({ Authorization: `Bearer ${tenant.token}` })
    .send(write(1, "Users on Android report that sync fails every time."));
  if (revised.status !== 200) throw new Error(`record revise failed: ${revised.status} ${JSON.stringify(revised.body)}`);
  return { tenant, baseUrl, close, contentIds, analysisId: analysis.id, insightId, recordQuote, analysisWorkers };
}

/** Creates a share link as the tenant and answers its record (with `url`). */
export { analysisProcessor };

export async function share(h: Harness, token: string, resource: string, id: string, expiresIn?: number) {
  const res = await h.http
    .post("/api/share-links")
    .set({ Authorization: `Bearer ${token}` })
    .send({ resource, id, ...(expiresIn === undefined ? {} : { expires_in: expiresIn }) });
  if (res.status !== 201) throw new Error(`share failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as { id: string; url: string; state: string; expires_at: string; workspace_id: string };
}
