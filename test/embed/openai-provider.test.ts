import { once } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createHarness, type Harness } from "../helpers/harness.js";

/**
 * The OpenAI-compatible provider against a local server that answers in OpenAI's
 * `POST /v1/embeddings` format; `mode` switches it into each failure the provider must map.
 */
type Mode = "ok" | "error500" | "rate429" | "refuse400" | "notJson" | "wrongShape" | "wrongCount" | "hang";
let mode: Mode = "ok";
const received: { path: string; auth: string | undefined; body: { model: string; input: string[] } }[] = [];

function fakeVector(text: string, dims = 8): number[] {
  const v = Array.from({ length: dims }, (_, i) => ((text.charCodeAt(i % text.length) * (i + 1)) % 17) - 8 + 0.5);
  const n = Math.sqrt(v.reduce((s, x) => s + x * x, 0));
  return v.map((x) => x / n);
}

async function handle(req: IncomingMessage, res: ServerResponse) {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { model: string; input: string[] };
  received.push({ path: req.url ?? "", auth: req.headers.authorization, body });
  const json = (status: number, payload: unknown) => {
    res.writeHead(status, { "content-type": "application/json" });
    res.end(JSON.stringify(payload));
  };
  switch (mode) {
    case "ok":
      return json(200, {
        object: "list",
        // Out of order on purpose: the provider must place vectors by `index`.
        data: body.input.map((t, index) => ({ object: "embedding", index, embedding: fakeVector(t) })).reverse(),
        model: body.model,
        usage: { prompt_tokens: 3, total_tokens: 3 },
      });
    case "error500":
      return json(500, { error: { message: "The server had an error", type: "server_error" } });
    case "rate429":
      return json(429, { error: { message: "Rate limit reached", type: "requests" } });
    case "refuse400":
      return json(400, { error: { message: "This model's maximum context length is 8192 tokens", type: "invalid_request_error" } });
    case "notJson":
      res.writeHead(200, { "content-type": "text/html" });
      return res.end("<html>gateway</html>");
    case "wrongShape":
      return json(200, { object: "list", data: [{ object: "embedding", index: 0, embedding: "not a vector" }] });
    case "wrongCount":
      return json(200, { object: "list", data: [] });
    case "hang":
      return; // never answers; the provider's timeout must end the wait
  }
}

let server: Server;
let h: Harness;
let bearer: string;
beforeAll(async () => {
  server = createServer((req, res) => {
    handle(req, res).catch((err: Error) => res.destroy(err));
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  h = await createHarness({
    EMBEDDINGS_URL: `http://127.0.0.1:${port}/v1`,
    EMBEDDINGS_API_KEY: "sk-test-key",
    EMBEDDINGS_MODEL: "text-embedding-3-small",
    EMBEDDINGS_TIMEOUT_MS: "300",
  });
  bearer = `Bearer ${await h.token()}`;
});
afterAll(async () => {
  await h.close();
  server.closeAllConnections();
  server.close();
});
beforeEach(() => {
  mode = "ok";
  received.length = 0;
});

const embed = (text: string) => h.http.post("/agent/v1/content/embed").set("Authorization", bearer).send({ text });

describe("OpenAI-compatible embeddings provider", () => {
  it("posts {model, input} with the API key to /embeddings and answers the provider's vector", async () => {
    const res = await embed("hello world");
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ embedding: fakeVector("hello world"), model: "text-embedding-3-small", dimensions: 8 });
    expect(received).toEqual([
      { path: "/v1/embeddings", auth: "Bearer sk-test-key", body: { model: "text-embedding-3-small", input: ["hello world"] } },
    ]);
  });

  it.each([
    ["error500", 503, "upstream_unavailable"],
    ["rate429", 503, "upstream_unavailable"],
    ["hang", 503, "upstream_unavailable"],
    ["refuse400", 502, "upstream_error"],
    ["notJson", 502, "upstream_error"],
    ["wrongShape", 502, "upstream_error"],
    ["wrongCount", 502, "upstream_error"],
  ] as const)("maps a provider answering %s to %i %s, never an empty success", async (m, status, code) => {
    mode = m;
    const res = await embed("hello world");
    expect(res.status).toBe(status);
    expect(res.body).toEqual({ detail: expect.any(String), code });
  });
});

describe("OpenAI-compatible embeddings provider, unreachable", () => {
  it("answers 503 when nothing listens at the configured URL", async () => {
    const closed = createServer();
    closed.listen(0, "127.0.0.1");
    await once(closed, "listening");
    const { port } = closed.address() as AddressInfo;
    closed.close();
    await once(closed, "close");
    const other = await createHarness({ EMBEDDINGS_URL: `http://127.0.0.1:${port}/v1` });
    try {
      const res = await other.http
        .post("/agent/v1/content/embed")
        .set("Authorization", `Bearer ${await other.token()}`)
        .send({ text: "hello" });
      expect(res.status).toBe(503);
      expect(res.body.code).toBe("upstream_unavailable");
    } finally {
      await other.close();
    }
  });
});
