import { createServer, type Server } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { syncRequestHash } from "../../src/intake/notes/service.js";
import { bearer, createEntityFor } from "../helpers/evidence.js";
import { createHarness, type Harness } from "../helpers/harness.js";

/**
 * A retry of a failed meeting-note sync while Redis is down: the queue refuses the new attempt, so
 * it is removed again (503), and the failed sync is left exactly as it ended.
 */
let h: Harness;
let token: string;

beforeAll(async () => {
  const probe: Server = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const closedPort = (probe.address() as { port: number }).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  h = await createHarness({ REDIS_URL: `redis://127.0.0.1:${closedPort}` });
  token = await h.token();
});
afterAll(() => h?.close());

describe("POST /api/meetingnotes/sync while Redis is down", () => {
  it("a retry of a failed sync answers 503, leaves no new attempt and the failed sync as it was", async () => {
    const entity = await createEntityFor(h, token, { name: "Downnotes" });
    const user = await h.deps.db.user.findFirstOrThrow({ where: { memberships: { some: { workspaceId: entity.workspace_id } } } });
    const params = { entity_id: entity.id, max_notes: 10, include_transcript: true };
    const failed = await h.deps.db.noteSync.create({
      data: {
        userId: user.id,
        entityId: entity.id,
        requestId: "notes-failed-before-outage",
        requestHash: syncRequestHash(params),
        params,
        status: "failed",
        error: "The provider refused the key.",
        errorCode: "provider_unauthorized",
        finishedAt: new Date(),
      },
    });
    for (let i = 0; i < 2; i++) {
      const res = await h.http
        .post("/api/meetingnotes/sync")
        .set(bearer(token))
        .send({ api_key: "grn_test_key_123456", entity_id: entity.id, request_id: "notes-failed-before-outage" });
      expect(res.status, JSON.stringify(res.body)).toBe(503);
      expect(res.body.code).toBe("service_unavailable");
      expect(await h.deps.db.noteSync.findMany({ where: { requestId: "notes-failed-before-outage" } })).toEqual([failed]);
    }
  });
});
