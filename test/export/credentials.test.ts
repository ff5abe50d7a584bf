import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runAdminCommand } from "../../src/governance/admin/commands.js";
import { bearer, createEntityFor, createKeyFor, source } from "../helpers/evidence.js";
import { createHarness, type Harness, randomId } from "../helpers/harness.js";

/** The credential rules of both export operations (spec Authentication part, DESIGN.md §2). */
let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h.close());

const table = (auth?: Record<string, string>, path = "/agent/v1/export/table/content_store") => {
  const req = h.http.get(path);
  return auth ? req.set(auth) : req;
};
const audit = (auth?: Record<string, string>, query = "") => {
  const req = h.http.get(`/agent/v1/export/completeness${query}`);
  return auth ? req.set(auth) : req;
};

async function userWithEntity() {
  const sub = randomId("exporter-");
  const token = await h.token(sub);
  const entity = await createEntityFor(h, token);
  const ingested = await h.http
    .post("/agent/v1/ingest/content")
    .set(bearer(token))
    .send({ entity_id: entity.id, sources: [source(1)] });
  expect(ingested.status).toBe(200);
  return { sub, token, entity };
}

describe("export table credentials", () => {
  it("refuses a request without a credential (401)", async () => {
    const res = await table();
    expect(res.status).toBe(401);
    expect(res.headers["www-authenticate"]).toMatch(/^Bearer/);
    expect(res.body.code).toBe("unauthorized");
  });

  it("refuses an ingest-only key and a user bearer (403), even for an enabled account", async () => {
    const { sub, token } = await userWithEntity();
    await runAdminCommand(h.deps, ["enable-raw-export", sub]);
    const ingestKey = await createKeyFor(h, token, ["ingest"]);
    const byKey = await table(bearer(ingestKey.raw_key));
    expect(byKey.status).toBe(403);
    expect(byKey.body.code).toBe("insufficient_scope");
    const byBearer = await table(bearer(token));
    expect(byBearer.status).toBe(403);
    expect(byBearer.body.code).toBe("insufficient_scope");
  });

  it("refuses an export key until an operator enables raw export, then answers", async () => {
    const { sub, token } = await userWithEntity();
    const exportKey = await createKeyFor(h, token, ["export"]);
    const before = await table(bearer(exportKey.raw_key));
    expect(before.status).toBe(403);
    expect(before.body.code).toBe("raw_export_disabled");

    await runAdminCommand(h.deps, ["enable-raw-export", sub]);
    const after = await table(bearer(exportKey.raw_key));
    expect(after.status).toBe(200);
    expect(after.body.total).toBe(1);
    const fullKey = await createKeyFor(h, token, ["*"]);
    expect((await table(bearer(fullKey.raw_key))).status).toBe(200);

    await runAdminCommand(h.deps, ["disable-raw-export", sub]);
    expect((await table(bearer(exportKey.raw_key))).status).toBe(403);
  });

  it("lets an internal agent's export key through without the account flag", async () => {
    const { sub, token } = await userWithEntity();
    const exportKey = await createKeyFor(h, token, ["export"]);
    await runAdminCommand(h.deps, ["mark-internal-agent", sub]);
    expect((await table(bearer(exportKey.raw_key))).status).toBe(200);
  });

  it("refuses a revoked key at once (401)", async () => {
    const { sub, token } = await userWithEntity();
    await runAdminCommand(h.deps, ["enable-raw-export", sub]);
    const exportKey = await createKeyFor(h, token, ["export"]);
    expect((await table(bearer(exportKey.raw_key))).status).toBe(200);
    const revoked = await h.http.delete(`/api/user/keys/${exportKey.key.id}`).set(bearer(token));
    expect(revoked.status).toBe(200);
    const res = await table(bearer(exportKey.raw_key));
    expect(res.status).toBe(401);
    expect(res.body.code).toBe("key_revoked");
  });

  it("answers 404 for another user's entity and never returns their rows", async () => {
    const alice = await userWithEntity();
    const bob = await userWithEntity();
    await runAdminCommand(h.deps, ["enable-raw-export", alice.sub]);
    const key = await createKeyFor(h, alice.token, ["export"]);
    const res = await table(bearer(key.raw_key), `/agent/v1/export/table/content_store?entity_id=${bob.entity.id}`);
    expect(res.status).toBe(404);
    expect(res.body.code).toBe("not_found");
    const mine = await table(bearer(key.raw_key));
    expect(mine.body.rows.every((r: { entity_id: string }) => r.entity_id === alice.entity.id)).toBe(true);
    expect((await audit(bearer(key.raw_key), `?entity_id=${bob.entity.id}`)).status).toBe(404);
    expect((await audit(bearer(key.raw_key), `?workspace_id=${bob.entity.workspace_id}`)).status).toBe(404);
  });

  it("answers a 422 on the path for a table outside the seven", async () => {
    const { sub, token } = await userWithEntity();
    await runAdminCommand(h.deps, ["enable-raw-export", sub]);
    const key = await createKeyFor(h, token, ["export"]);
    for (const name of ["api_keys", "users", "coverage_records", "CONTENT_STORE"]) {
      const res = await table(bearer(key.raw_key), `/agent/v1/export/table/${name}`);
      expect(res.status).toBe(422);
      expect(res.body.detail).toEqual([expect.objectContaining({ loc: ["path", "table_name"], type: "enum" })]);
    }
  });
});

describe("completeness credentials", () => {
  it("accepts a whitelisted bearer or an export key of an enabled account, and refuses the rest", async () => {
    const { sub, token } = await userWithEntity();
    expect((await audit()).status).toBe(401);
    const notWhitelisted = await audit(bearer(token));
    expect(notWhitelisted.status).toBe(403);
    expect(notWhitelisted.body.code).toBe("raw_export_disabled");
    const exportKey = await createKeyFor(h, token, ["export"]);
    expect((await audit(bearer(exportKey.raw_key))).body.code).toBe("raw_export_disabled");

    await runAdminCommand(h.deps, ["enable-raw-export", sub]);
    expect((await audit(bearer(token))).status).toBe(200);
    expect((await audit(bearer(exportKey.raw_key))).status).toBe(200);
    const ingestKey = await createKeyFor(h, token, ["ingest"]);
    const byIngestKey = await audit(bearer(ingestKey.raw_key));
    expect(byIngestKey.status).toBe(403);
    expect(byIngestKey.body.code).toBe("insufficient_scope");
    await h.http.delete(`/api/user/keys/${exportKey.key.id}`).set(bearer(token));
    expect((await audit(bearer(exportKey.raw_key))).status).toBe(401);
  });
});

describe("interface description", () => {
  it("lists both export operations in /openapi.json with their parameters", async () => {
    const doc = (await h.http.get("/openapi.json")).body;
    const tableOp = doc.paths["/agent/v1/export/table/{table_name}"]?.get;
    const auditOp = doc.paths["/agent/v1/export/completeness"]?.get;
    expect(tableOp).toBeDefined();
    expect(auditOp).toBeDefined();
    expect(tableOp.parameters.map((p: { name: string }) => p.name)).toEqual(
      expect.arrayContaining(["table_name", "entity_id", "limit", "offset", "cursor"]),
    );
    const tableParam = tableOp.parameters.find((p: { name: string }) => p.name === "table_name");
    expect(tableParam.schema.enum).toEqual([
      "entities",
      "content_store",
      "opinion_units",
      "entity_insights",
      "insight_evidence",
      "pages",
      "knowledge",
    ]);
    expect(auditOp.parameters.map((p: { name: string }) => p.name)).toEqual(
      expect.arrayContaining(["entity_id", "workspace_id", "platform"]),
    );
    expect(doc.paths["/agent/v1/ingest/content"]?.post).toBeDefined();
    expect(doc.paths["/agent/v1/ingest/coverage"]?.post).toBeDefined();
  });
});
