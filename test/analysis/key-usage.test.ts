import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { processors } from "../../workers/processors.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { listen, openStream } from "./sse-client.js";

let h: Harness;
let server: Awaited<ReturnType<typeof listen>>;
beforeAll(async () => {
  h = await createHarness();
  h.startWorkers(processors, 2);
  server = await listen(h);
});
afterAll(async () => {
  await server.close();
  await h.close();
});

describe("streamed answers and API key usage", () => {
  it("records a keyed replay of an analysis stream in the key's usage", async () => {
    const token = await h.token();
    const run = await openStream(`${server.baseUrl}/agent/v1/analysis/run`, { method: "POST", token, body: { question: "What is said?" } });
    await run.until((events) => events.some((e) => e.event === "result" || e.event === "error"));
    const analysisId = run.headers.get("x-analysis-id");
    expect(analysisId).toMatch(/^[0-9a-f-]{36}$/);

    const key = await h.http
      .post("/api/user/keys")
      .set("Authorization", `Bearer ${token}`)
      .send({ name: "replay", scopes: ["*"] });
    const replay = await openStream(`${server.baseUrl}/agent/v1/analysis/${analysisId}/events`, { token: key.body.raw_key });
    expect(replay.status).toBe(200);
    await replay.closed;
    expect(replay.events.at(-1)?.event).toMatch(/result|error/);

    // The usage record is written once the stream has ended, which the client may see first.
    const readUsage = async () =>
      (await h.http.get(`/api/user/keys/${key.body.key.id}/usage`).set("Authorization", `Bearer ${token}`)).body.records as unknown[];
    let records = await readUsage();
    for (const deadline = Date.now() + 10_000; records.length === 0 && Date.now() < deadline; records = await readUsage()) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(records).toEqual([
      expect.objectContaining({ method: "GET", route: "/agent/v1/analysis/:analysis_id/events", status_code: 200, scope_used: "*" }),
    ]);
  });
});
