import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHarness, type Harness } from "../helpers/harness.js";

/**
 * HSTS and the CSP's upgrade-insecure-requests make browsers rewrite later requests to
 * https://; they are sent only when the service is configured as served over HTTPS
 * (PUBLIC_BASE_URL https://), so /docs and /admin/queues work over plain HTTP.
 */
const operator = `Basic ${Buffer.from("operator:operator-password").toString("base64")}`;

async function pages(h: Harness) {
  const health = await h.http.get("/agent/v1/health");
  const docs = await h.http.get("/docs/");
  const queues = await h.http.get("/admin/queues").set("Authorization", operator);
  expect(docs.status).toBe(200);
  expect(queues.status).toBe(200);
  return { health, docs, queues };
}

describe.each<{ label: string; env: Record<string, string> }>([
  { label: "no PUBLIC_BASE_URL", env: {} },
  { label: "an http:// PUBLIC_BASE_URL", env: { PUBLIC_BASE_URL: "http://evidence.internal:3000" } },
])("served over plain HTTP ($label)", ({ env }) => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness(env);
  });
  afterAll(() => h.close());

  it("sends neither HSTS nor upgrade-insecure-requests, on the API, /docs and /admin/queues", async () => {
    for (const [where, res] of Object.entries(await pages(h))) {
      expect(res.headers["strict-transport-security"], where).toBeUndefined();
      expect(res.headers["content-security-policy"] ?? "", where).not.toMatch(/upgrade-insecure-requests/);
      expect(res.headers["x-content-type-options"], where).toBe("nosniff");
    }
    const { health, queues } = await pages(h);
    for (const res of [health, queues]) expect(res.headers["content-security-policy"]).toMatch(/default-src 'self'/);
  });
});

describe("served over HTTPS (PUBLIC_BASE_URL https://)", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness({ PUBLIC_BASE_URL: "https://evidence.example.com" });
  });
  afterAll(() => h.close());

  it("sends HSTS everywhere and upgrade-insecure-requests wherever a CSP is sent", async () => {
    const { health, docs, queues } = await pages(h);
    for (const [where, res] of Object.entries({ health, docs, queues })) {
      expect(res.headers["strict-transport-security"], where).toMatch(/max-age=\d{7,}/);
    }
    for (const res of [health, queues]) expect(res.headers["content-security-policy"]).toMatch(/upgrade-insecure-requests/);
    expect(docs.headers["content-security-policy"]).toBeUndefined();
  });
});
