import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { hashingVector } from "../../src/insights/embed/hashing.js";

/**
 * A local embeddings provider in OpenAI's format (`POST …/embeddings`), with vectors from the
 * service's own hashing function so similarity means something. `gate` runs before each answer:
 * it may wait (to hold a request in flight) or answer "fail" for a 503 `overloaded`.
 */
export interface EmbeddingsServer {
  /** The base URL to set as EMBEDDINGS_URL. */
  url: string;
  /** Requests received so far. */
  requests: () => number;
  close: () => Promise<void>;
}

export async function startEmbeddingsServer(
  gate: () => Promise<"fail" | undefined> | "fail" | undefined = () => undefined,
): Promise<EmbeddingsServer> {
  let requests = 0;
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    requests += 1;
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { model: string; input: string[] };
    if ((await gate()) === "fail") {
      res.writeHead(503, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: "overloaded", type: "server_error" } }));
      return;
    }
    res.writeHead(200, { "content-type": "application/json" });
    res.end(
      JSON.stringify({
        object: "list",
        data: body.input.map((t, index) => ({ object: "embedding", index, embedding: hashingVector(t) })),
        model: body.model,
        usage: { prompt_tokens: 1, total_tokens: 1 },
      }),
    );
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests: () => requests,
    close: async () => {
      server.closeAllConnections();
      server.close();
    },
  };
}
