import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHarness, type Harness } from "../helpers/harness.js";

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h.close());

describe("GET /agent/v1/health", () => {
  it("answers ok with version and both dependencies, without credentials", async () => {
    const res = await h.http.get("/agent/v1/health");
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      status: "ok",
      version: "1.0.0",
      dependencies: { postgres: { status: "ok" }, redis: { status: "ok" } },
    });
    expect(res.headers["x-request-id"]).toMatch(/.+/);
  });
});
