import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runAdminCommand } from "../../src/governance/admin/commands.js";
import { IngestRequestSchema } from "../../src/intake/ingest/schemas.js";
import { ingestContent } from "../../src/intake/ingest/service.js";
import { Queues } from "../../src/platform/queues.js";
import { bearer, comment, countRows, createEntityFor, source } from "../helpers/evidence.js";
import { createHarness, type Harness } from "../helpers/harness.js";

let h: Harness;
let token: string;
beforeAll(async () => {
  h = await createHarness();
  token = await h.token();
  // A real failure inside the database: any row whose text is FAIL-HERE is refused.
  await h.deps.db.$executeRawUnsafe(`
    CREATE FUNCTION refuse_marked_rows() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.content = 'FAIL-HERE' THEN RAISE EXCEPTION 'provoked failure for row %', NEW.dedup_key; END IF;
      RETURN NEW;
    END $$`);
  await h.deps.db.$executeRawUnsafe(
    "CREATE TRIGGER refuse_marked_rows BEFORE INSERT ON content_store FOR EACH ROW EXECUTE FUNCTION refuse_marked_rows()",
  );
});
afterAll(() => h.close());

async function queuedIds(): Promise<string[]> {
  const jobs = await h.deps.queues.get("enrichment").getJobs(["waiting", "delayed", "active", "completed", "failed"]);
  return jobs.flatMap((j) => (j.data as { contentIds: string[] }).contentIds);
}

const ingest = (body: Record<string, unknown>) => h.http.post("/agent/v1/ingest/content").set(bearer(token)).send(body);

describe("ingest is all or nothing", () => {
  it("stores nothing when one item of the batch is invalid, and names that item", async () => {
    const entity = await createEntityFor(h, token);
    const sources = Array.from({ length: 20 }, (_, i) => source(i, { comments: [comment(i)] }));
    sources[13] = source(13, { comments: [comment(1), { text: "" }] });
    const res = await ingest({ entity_id: entity.id, sources });
    expect(res.status).toBe(422);
    expect(res.body.detail).toEqual([
      { loc: ["body", "sources", 13, "comments", 1, "text"], msg: expect.any(String), type: "string_too_short" },
    ]);
    expect(await countRows(h, entity.id)).toEqual({ sources: 0, comments: 0 });
  });

  it("stores nothing when the database fails after part of the batch was written", async () => {
    const entity = await createEntityFor(h, token);
    const kept = await ingest({ entity_id: entity.id, sources: [source(100)] });
    expect(kept.status).toBe(200);

    // Every source is inserted before the last comment is refused by the trigger.
    const sources = Array.from({ length: 50 }, (_, i) => source(i, { comments: [comment(i)] }));
    sources[49] = source(49, { comments: [comment(1), comment(2, { text: "FAIL-HERE" })] });
    const res = await ingest({ entity_id: entity.id, sources });
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ detail: expect.any(String), code: "internal_error" });
    expect(await countRows(h, entity.id)).toEqual({ sources: 1, comments: 0 });

    // A failing source in the middle of the batch: the same.
    const middle = Array.from({ length: 10 }, (_, i) => source(200 + i));
    middle[5] = source(205, { content: "FAIL-HERE" });
    expect((await ingest({ entity_id: entity.id, sources: middle })).status).toBe(500);
    expect(await countRows(h, entity.id)).toEqual({ sources: 1, comments: 0 });

    // Nothing was queued for enrichment for the rolled-back rows.
    expect(await queuedIds()).toEqual(kept.body.content_ids);
  });

  it("keeps the committed rows and logs the failure when enrichment cannot be queued", async () => {
    const entity = await createEntityFor(h, token);
    const lines: { msg?: string; rows?: number }[] = [];
    const logger = pino({ level: "info" }, { write: (line: string) => lines.push(JSON.parse(line)) });
    const unreachable = new Queues({ redisUrl: "redis://127.0.0.1:1", prefix: "unreachable" });
    try {
      const request = IngestRequestSchema.parse({ sources: [source(1, { comments: [comment(1)] })] });
      const result = await ingestContent(
        { db: h.deps.db, queues: unreachable, logger, config: h.deps.config },
        { id: entity.id, workspaceId: entity.workspace_id },
        request,
      );
      expect(result.inserted).toBe(2);
    } finally {
      await unreachable.close();
    }
    expect(await countRows(h, entity.id)).toEqual({ sources: 1, comments: 1 });
    expect(lines).toContainEqual(
      expect.objectContaining({ msg: "enrichment could not be queued; the stored rows remain unenriched", rows: 2 }),
    );

    // The operator command queues them again once the queue is back.
    const before = await queuedIds();
    expect(await runAdminCommand(h.deps, ["requeue-enrichment", entity.id])).toBe(
      `queued 2 unenriched row(s) in 1 enrichment job(s) for entity ${entity.id}`,
    );
    const stored = await h.deps.db.content.findMany({ where: { entityId: entity.id }, select: { id: true } });
    const added = (await queuedIds()).filter((id) => !before.includes(id));
    expect(added.sort()).toEqual(stored.map((r) => r.id).sort());
  });
});
