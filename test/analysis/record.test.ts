import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHarness, type Harness } from "../helpers/harness.js";
import { type Listening, listen, rawRequest } from "../reliability/support/http.js";
import { createTenant, type Tenant } from "./fixtures.js";

/** `GET /agent/v1/analysis/{id}` describes the analysis as it runs, defaults included. */
let h: Harness;
let server: Listening;
let tenant: Tenant;

beforeAll(async () => {
  h = await createHarness();
  server = await listen(h.app);
  tenant = await createTenant(h);
});
afterAll(async () => {
  await server?.close();
  await h?.close();
});

/** Starts an analysis (the stream is left after its headers) and answers its id. */
async function start(body: Record<string, unknown>): Promise<string> {
  const res = await rawRequest(server.port, {
    method: "POST",
    path: "/agent/v1/analysis/run",
    headers: { "content-type": "application/json", Authorization: `Bearer ${tenant.token}` },
    body: JSON.stringify({ question: "What do people say about pricing?", entity_id: tenant.entityId, ...body }),
  });
  expect(res.status, res.text).toBe(200);
  return String(res.headers["x-analysis-id"]);
}

const record = async (id: string) => {
  const res = await h.http.get(`/agent/v1/analysis/${id}`).set("Authorization", `Bearer ${tenant.token}`);
  expect(res.status).toBe(200);
  return res.body as { search_mode: string; depth: string };
};

describe("GET /agent/v1/analysis/{id}", () => {
  it("reports the search_mode the analysis runs with: the default when none was named", async () => {
    const requestId = `record-${randomUUID()}`;
    const id = await start({ request_id: requestId });
    expect(await record(id)).toMatchObject({ search_mode: "multi_source", depth: "brief" });

    // Naming the default, or null, is the same request.
    expect(await start({ request_id: requestId, search_mode: "multi_source" })).toBe(id);
    expect(await start({ request_id: requestId, search_mode: null })).toBe(id);
  });

  it("reports a named search_mode as named", async () => {
    const id = await start({ search_mode: "web_only" });
    expect((await record(id)).search_mode).toBe("web_only");
  });

  it("reports the default for analyses stored without a mode", async () => {
    const row = await h.deps.db.analysis.create({
      data: { userId: tenant.userId, question: "Older analysis", searchMode: null, status: "queued" },
    });
    expect((await record(row.id)).search_mode).toBe("multi_source");
  });
});
