import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { analysisPublication, type Publication, publishGeneratedRecords } from "../../src/insights/knowledge/publish.js";
import { analysisProcessor } from "../../workers/analysis.js";
import { CORPUS } from "../analysis/corpus.js";
import { listen, openStream } from "../analysis/sse-client.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { addMember, auth, createTeam, insightBody, reviseInsight, type Team } from "./support.js";

/**
 * Analyses publish their insights as generated knowledge records: the publishing itself with
 * fixed insights (refresh in place, no revision when nothing changed, an agent's revision never
 * overwritten), and a real analysis run by the worker.
 */
let h: Harness;
let team: Team;
let base: string;
let closeServer: () => Promise<void>;

beforeAll(async () => {
  h = await createHarness();
  ({ baseUrl: base, close: closeServer } = await listen(h));
  h.startWorkers({ "analysis.run.v1": analysisProcessor });
  team = await createTeam(h);
});
afterAll(async () => {
  await closeServer();
  await h?.close();
});

function publication(overrides: Partial<Publication> = {}): Publication {
  return {
    analysisId: randomUUID(),
    userId: team.userId,
    entityId: team.entityId,
    projectId: null,
    question: "What do buyers say about pricing?",
    limitations: ["Three posts."],
    insights: [
      {
        key: "pricing",
        title: "Pricing: confusing",
        summary: "The pricing page confuses buyers.",
        reasoning: "Generated.",
        tags: ["generated", "negative"],
        evidence: [{ content_id: team.content.pricing, quote: "the pricing page is confusing", start_offset: 9 }],
      },
      {
        key: "export",
        title: "Export: unreliable",
        summary: "CSV export breaks.",
        reasoning: "Generated.",
        tags: ["generated", "negative"],
        evidence: [{ content_id: team.content.export, quote: "Export to CSV broke twice this week", start_offset: 0 }],
      },
    ],
    ...overrides,
  };
}

const publish = (p: Publication) => h.deps.db.$transaction((tx) => publishGeneratedRecords(tx, p));
const read = (id: string, scope = `entity_id=${team.entityId}`) =>
  h.http.get(`/agent/v1/knowledge/insights/${id}?${scope}`).set(auth(team.token));

describe("publishing generated records", () => {
  it("creates a generated record per insight, refreshes it in place, and makes no revision when nothing changed", async () => {
    const first = publication();
    const ids = await publish(first);
    expect(ids).toHaveLength(2);
    const [pricingId, exportId] = ids as [string, string];
    const record = (await read(pricingId)).body.record;
    expect(record).toMatchObject({
      revision: 1,
      origin: "generated",
      actor_id: team.userId,
      client_label: "analysis",
      analysis_id: first.analysisId,
      review_state: "unreviewed",
      title: "Pricing: confusing",
      limitations: ["Three posts."],
      evidence: [{ content_id: team.content.pricing, quote: "the pricing page is confusing", relation: "supports", start: 9 }],
    });

    const changes = await h.deps.db.knowledgeChange.count();
    expect(await publish({ ...first, analysisId: randomUUID() })).toEqual(ids);
    expect(await h.deps.db.knowledgeChange.count()).toBe(changes);
    expect((await read(pricingId)).body.record.revision).toBe(1);

    const rerun = publication({ analysisId: randomUUID() });
    (rerun.insights[1] as { summary: string }).summary = "CSV export breaks often.";
    expect(await publish(rerun)).toEqual(ids);
    expect((await read(exportId)).body.record).toMatchObject({ revision: 2, origin: "generated", summary: "CSV export breaks often." });
    expect((await read(pricingId)).body.record.revision).toBe(1);
  });

  it("never overwrites a record an agent has revised", async () => {
    const q = "What do buyers say about exports?";
    const [id] = (await publish(publication({ question: q }))) as string[];
    const revised = await reviseInsight(
      h,
      team.token,
      id as string,
      insightBody(team, { expected_revision: 1, title: "Export: unreliable, confirmed by support", summary: "Agent's reading." }),
    );
    expect(revised.status).toBe(200);
    const later = publication({ question: q, analysisId: randomUUID() });
    (later.insights[0] as { summary: string }).summary = "A newer generated summary.";
    expect((await publish(later))[0]).toBe(id);
    const record = (await read(id as string)).body;
    expect(record.record).toMatchObject({ revision: 2, origin: "agent", summary: "Agent's reading." });
    // The generated predecessor stays readable.
    const first = await read(id as string, `entity_id=${team.entityId}&revision=1`);
    expect(first.body.record.origin).toBe("generated");
  });

  it("drops quotes that no longer read and publishes nothing without a scope or write access", async () => {
    const stale = publication({ question: "Anything else?" });
    (stale.insights[0] as { evidence: unknown[] }).evidence = [
      { content_id: team.content.pricing, quote: "not in the original text", start_offset: 0 },
    ];
    const ids = await publish(stale);
    expect(ids[0]).toBeNull();
    expect(ids[1]).toEqual(expect.any(String));
    expect(await publish(publication({ entityId: null, projectId: null }))).toEqual([]);
    const viewer = await addMember(h, team, "viewer");
    expect(await publish(publication({ userId: viewer.userId, question: "A viewer's question?" }))).toEqual([]);
    // A project analysis publishes to the project.
    const project = await publish(publication({ entityId: null, projectId: team.projectId, question: "Project question?" }));
    expect((await read(project[0] as string, `project_id=${team.projectId}`)).body.record.project_id).toBe(team.projectId);
  });
});

describe("an analysis run", () => {
  it("returns the ids of the records it published, and a re-run of the same question refreshes the same records", async () => {
    const ingest = await h.http
      .post("/agent/v1/ingest/content")
      .set(auth(team.token))
      .send({ entity_id: team.entityId, sources: CORPUS.map((s) => ({ ...s, id: randomUUID() })) });
    expect(ingest.status).toBe(200);
    const run = async () => {
      const stream = await openStream(`${base}/agent/v1/analysis/run`, {
        method: "POST",
        token: team.token,
        body: { question: "What do people think of Acme pricing and support?", entity_id: team.entityId },
      });
      expect(stream.status).toBe(200);
      await stream.closed;
      const last = stream.events.at(-1);
      expect(last?.event).toBe("result");
      return last?.data as { analysis_id: string; data: { insights: { title: string }[]; knowledge_record_ids: (string | null)[] } };
    };
    const first = await run();
    const ids = first.data.knowledge_record_ids;
    expect(first.data.insights.length).toBeGreaterThan(0);
    expect(ids).toHaveLength(first.data.insights.length);
    const published = ids.filter((id): id is string => id !== null);
    expect(published.length).toBeGreaterThan(0);
    for (const id of published) {
      const res = await read(id);
      expect(res.status).toBe(200);
      expect(res.body.record).toMatchObject({ origin: "generated", analysis_id: first.analysis_id, actor_id: team.userId });
      expect(res.body.resolved_evidence.every((e: { available: boolean }) => e.available)).toBe(true);
    }
    const stored = await h.http.get(`/agent/v1/analysis/${first.analysis_id}`).set(auth(team.token));
    expect(stored.body.result.data.knowledge_record_ids).toEqual(ids);

    const revisions = await h.deps.db.knowledgeInsight.findMany({ where: { id: { in: published } }, orderBy: { id: "asc" } });
    const second = await run();
    expect(second.analysis_id).not.toBe(first.analysis_id);
    expect(second.data.knowledge_record_ids).toEqual(ids);
    // The same findings over the same originals: refreshed in place, and no new revision.
    expect(await h.deps.db.knowledgeInsight.findMany({ where: { id: { in: published } }, orderBy: { id: "asc" } })).toEqual(revisions);
  }, 60_000);
});

describe("analysisPublication", () => {
  it("keys a finding by aspect and side, so an aspect's complaints and praise are two records", () => {
    const insight = (polarity: "complaint" | "praise", title: string) =>
      ({
        title,
        summary: `${title}.`,
        sentiment: polarity === "complaint" ? "negative" : "positive",
        confidence: 0.8,
        aspect: "pricing",
        polarity,
        evidence: [],
      }) as unknown as Parameters<typeof analysisPublication>[1]["insights"][number];
    const publication = analysisPublication(
      { id: randomUUID(), userId: randomUUID(), entityId: randomUUID(), projectId: null, question: "What about pricing?" },
      { insights: [insight("complaint", "Pricing — complaints"), insight("praise", "Pricing — praise")], limitations: [] },
    );
    const keys = publication.insights.map((i) => i.key);
    expect(keys).toEqual(["pricing:complaint", "pricing:praise"]);
  });
});
