import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { enrichmentProcessor } from "../../workers/enrichment.js";
import { until } from "../collection/support.js";
import { bearer, createEntityFor, createKeyFor } from "../helpers/evidence.js";
import { createHarness, type Harness } from "../helpers/harness.js";

/** POST /api/observations/submit: feedback snapshots saved as originals, retries answering the same ids. */
let h: Harness;
let token: string;
let ctx: { workspace_id: string; project_id: string; company: { id: string }; competitors: { id: string }[] };

const submit = (body: Record<string, unknown>, auth: Record<string, string> = bearer(token)) =>
  h.http.post("/api/observations/submit").set(auth).send(body);

beforeAll(async () => {
  h = await createHarness();
  token = await h.token();
  const res = await h.http
    .post("/api/entities/onboarding")
    .set(bearer(token))
    .send({ request_id: randomUUID(), company: { name: "Acme Notes" }, competitors: [{ name: "Globex" }] })
    .expect(201);
  ctx = res.body;
});
afterAll(() => h.close());

const slackItem = {
  content: "Dashboard keeps crashing when I filter by date range",
  source_platform: "slack",
  source_id: "slack:T1:C9:1712.55",
  observation_type: "bug_report",
  signal_type: "reception",
  metadata: {
    author: "user123",
    source_url: "https://acme.slack.com/archives/C9/p171255",
    published_at: "2026-02-03T04:05:06Z",
    channel: "#feedback",
  },
};

describe("POST /api/observations/submit", () => {
  it("saves each observation as an original of its entity, in request order, and an identical retry answers the same ids", async () => {
    const body = {
      project_id: ctx.project_id,
      observations: [
        slackItem,
        { content: "Would love CSV export for the analytics page", source_platform: "discord", observation_type: "feature_request" },
        {
          content: "Globex imports notes faster than we do",
          source_id: "call-7",
          source_platform: "granola",
          entity_id: ctx.competitors[0]?.id,
        },
      ],
    };
    const res = await submit(body);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({
      accepted: 3,
      processing_status: "queued",
      inserted: 3,
      existing: 0,
      project_id: ctx.project_id,
      workspace_id: ctx.workspace_id,
      count_basis: expect.stringMatching(/not unique people/),
    });
    expect(res.body.ids).toHaveLength(3);
    expect(
      res.body.observations.map((o: Record<string, unknown>) => [o.index, o.entity_id, o.platform, o.source_platform, o.status]),
    ).toEqual([
      [0, ctx.company.id, "slack", "slack", "created"],
      [1, ctx.company.id, "agent", "discord", "created"],
      [2, ctx.competitors[0]?.id, "meetingnotes", "granola", "created"],
    ]);

    const row = await h.deps.db.content.findUniqueOrThrow({ where: { id: res.body.ids[0] } });
    expect(row).toMatchObject({
      entityId: ctx.company.id,
      workspaceId: ctx.workspace_id,
      kind: "source",
      platform: "slack",
      externalId: "slack:T1:C9:1712.55",
      content: slackItem.content,
      author: "user123",
      url: "https://acme.slack.com/archives/C9/p171255",
      publishedAt: new Date("2026-02-03T04:05:06Z"),
      collectionScope: "observations",
      metadata: {
        ...slackItem.metadata,
        observation: {
          observation_type: "bug_report",
          signal_type: "reception",
          source_platform: "slack",
          source_id: "slack:T1:C9:1712.55",
        },
      },
    });

    const retry = await submit(body);
    expect(retry.status).toBe(200);
    expect(retry.body.ids).toEqual(res.body.ids);
    expect(retry.body).toMatchObject({ inserted: 0, existing: 3 });
    expect(retry.body.observations.every((o: { status: string }) => o.status === "existing")).toBe(true);
    expect(await h.deps.db.content.count({ where: { workspaceId: ctx.workspace_id } })).toBe(3);
  });

  it("keeps changed text for the same source_id as a new snapshot of that source", async () => {
    const first = await submit({ project_id: ctx.project_id, observations: [{ ...slackItem, source_id: "slack:T1:C9:2000.1" }] });
    const edited = await submit({
      project_id: ctx.project_id,
      observations: [{ ...slackItem, source_id: "slack:T1:C9:2000.1", content: `${slackItem.content} (edited: also on mobile)` }],
    });
    expect(edited.body.ids[0]).not.toBe(first.body.ids[0]);
    expect(first.body.observations[0]).toMatchObject({ status: "created", snapshot_of: null });
    expect(edited.body.observations[0]).toMatchObject({ status: "created", snapshot_of: first.body.ids[0] });
    // Same author: a new snapshot, not a new person.
    const rows = await h.deps.db.content.findMany({ where: { externalId: "slack:T1:C9:2000.1" }, select: { author: true } });
    expect(rows.map((r) => r.author)).toEqual(["user123", "user123"]);
    // Changed metadata alone is a new snapshot too; an identical retry of the edit is not.
    const relabelled = await submit({
      project_id: ctx.project_id,
      observations: [{ ...slackItem, source_id: "slack:T1:C9:2000.1", metadata: { ...slackItem.metadata, channel: "#bugs" } }],
    });
    expect(relabelled.body.observations[0]).toMatchObject({ status: "created", snapshot_of: first.body.ids[0] });
    const again = await submit({
      project_id: ctx.project_id,
      observations: [{ ...slackItem, source_id: "slack:T1:C9:2000.1", content: `${slackItem.content} (edited: also on mobile)` }],
    });
    expect(again.body.observations[0]).toMatchObject({ id: edited.body.ids[0], status: "existing", snapshot_of: first.body.ids[0] });
  });

  it("takes the entity from the item, then the request, then the project's company; without a project the entity's workspace", async () => {
    const res = await submit({
      entity_id: ctx.competitors[0]?.id,
      observations: [{ content: "Globex search is instant" }, { content: "Acme search is slow", entity_id: ctx.company.id }],
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ project_id: null, workspace_id: ctx.workspace_id });
    expect(res.body.observations.map((o: { entity_id: string; platform: string }) => [o.entity_id, o.platform])).toEqual([
      [ctx.competitors[0]?.id, "agent"],
      [ctx.company.id, "agent"],
    ]);

    const nowhere = await submit({ observations: [{ content: "No scope at all" }] });
    expect(nowhere.status).toBe(422);
    expect(nowhere.body.detail[0]).toMatchObject({ loc: ["body", "observations", 0, "entity_id"], type: "missing" });

    // An entity of another workspace of the same caller does not go into this project.
    const elsewhere = await h.http
      .post("/api/entities/onboarding")
      .set(bearer(token))
      .send({ request_id: randomUUID(), company: { name: "Elsewhere" } })
      .expect(201);
    expect(elsewhere.body.workspace_id).not.toBe(ctx.workspace_id);
    const mixed = await submit({
      project_id: ctx.project_id,
      observations: [{ content: "Wrong place", entity_id: elsewhere.body.company.id }],
    });
    expect(mixed.status).toBe(422);
    expect(mixed.body.detail[0]).toMatchObject({ loc: ["body", "observations", 0, "entity_id"], type: "value_error" });
  });

  it("refuses bad bodies with the 422 shape and stores nothing of a refused request", async () => {
    const before = await h.deps.db.content.count();
    const cases: [Record<string, unknown>, (string | number)[], string][] = [
      [{ project_id: ctx.project_id, observations: [] }, ["body", "observations"], "too_short"],
      [
        { project_id: ctx.project_id, observations: Array.from({ length: 51 }, (_, i) => ({ content: `o${i}` })) },
        ["body", "observations"],
        "too_long",
      ],
      [{ project_id: ctx.project_id, observations: [{ content: "" }] }, ["body", "observations", 0, "content"], "string_too_short"],
      [
        { project_id: ctx.project_id, observations: [{ content: "x", signal_type: "rumour" }] },
        ["body", "observations", 0, "signal_type"],
        "enum",
      ],
      [
        { project_id: ctx.project_id, observations: [{ content: "x", metadata: "not an object" }] },
        ["body", "observations", 0, "metadata"],
        "model_type",
      ],
      [{ project_id: ctx.project_id }, ["body", "observations"], "missing"],
    ];
    for (const [body, loc, type] of cases) {
      const res = await submit(body);
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(422);
      expect(res.body.detail[0]).toMatchObject({ loc, type });
    }
    // Fifty is the most; null reads as absent.
    const fifty = await submit({
      project_id: ctx.project_id,
      entity_id: null,
      observations: Array.from({ length: 50 }, (_, i) => ({ content: `Observation ${i}`, source_id: null, metadata: null })),
    });
    expect(fifty.status).toBe(200);
    expect(fifty.body.ids).toHaveLength(50);
    expect(await h.deps.db.content.count()).toBe(before + 50);
  });

  it("answers 404 for projects and entities the caller cannot see, and takes a bearer or an ingest key", async () => {
    const stranger = await h.token();
    const before = await h.deps.db.content.count();
    expect((await submit({ project_id: ctx.project_id, observations: [{ content: "hi" }] }, bearer(stranger))).status).toBe(404);
    const own = await createEntityFor(h, stranger, { name: "Stranger's" });
    const foreignItem = await submit(
      { entity_id: own.id, observations: [{ content: "a" }, { content: "b", entity_id: ctx.company.id }] },
      bearer(stranger),
    );
    expect(foreignItem.status).toBe(404);
    expect(foreignItem.body.code).toBe("not_found");
    expect(await h.deps.db.content.count()).toBe(before);

    const ingestKey = await createKeyFor(h, token, ["ingest"]);
    const exportKey = await createKeyFor(h, token, ["export"]);
    expect(
      (await submit({ project_id: ctx.project_id, observations: [{ content: "by key" }] }, { "X-API-Key": ingestKey.raw_key })).status,
    ).toBe(200);
    expect(
      (await submit({ project_id: ctx.project_id, observations: [{ content: "by key" }] }, { "X-API-Key": exportKey.raw_key })).status,
    ).toBe(403);
  });

  it("stores a link or a date from the metadata only when the ingest would", async () => {
    const res = await submit({
      project_id: ctx.project_id,
      observations: [
        { content: "Link too long", metadata: { source_url: `https://example.com/${"a".repeat(5000)}`, published_at: "yesterday" } },
        { content: "Not a link", metadata: { source_url: "javascript:alert(1)", published_at: "0000-01-01" } },
      ],
    });
    expect(res.status).toBe(200);
    const rows = await h.deps.db.content.findMany({
      where: { id: { in: res.body.ids } },
      select: { url: true, publishedAt: true, metadata: true },
    });
    for (const row of rows) expect(row).toMatchObject({ url: "", publishedAt: null });
    // The metadata is kept as sent.
    expect(rows.map((r) => (r.metadata as { published_at: string }).published_at).sort()).toEqual(["0000-01-01", "yesterday"]);
  });

  it("is enriched by the enrichment queue like any original, and says so on a retry", async () => {
    const workers = h.startWorkers({ "enrichment.content.v1": enrichmentProcessor });
    try {
      const body = {
        project_id: ctx.project_id,
        observations: [{ content: "Sync loses my edits. Support was great though.", source_id: "ticket-42" }],
      };
      const res = await submit(body);
      const id = res.body.ids[0] as string;
      await until(async () =>
        (await h.deps.db.content.findUniqueOrThrow({ where: { id }, include: { enrichment: true } })).enrichment?.enrichedAt
          ? true
          : undefined,
      );
      expect(await h.deps.db.opinionUnit.count({ where: { contentId: id } })).toBeGreaterThan(0);
      const retry = await submit(body);
      expect(retry.body).toMatchObject({ processing_status: "enriched", ids: [id], observations: [{ processing_status: "enriched" }] });
    } finally {
      await workers.close();
    }
  });
});
