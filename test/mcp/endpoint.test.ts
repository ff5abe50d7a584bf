import { randomUUID } from "node:crypto";
import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../src/app.js";
import { bearer, createEntityFor, createKeyFor } from "../helpers/evidence.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { type Listening, listen, rawRequest } from "../reliability/support/http.js";
import { callTool, connect, headersFor, ok, refused } from "./support.js";

/**
 * The endpoint itself: what tools/list describes, credentials checked before MCP, each tool
 * call held to its route's credential rule, rate limit and usage record, and tool errors that
 * carry the route's status and body.
 */
let h: Harness;
let server: Listening;
let token: string;
let entity: { id: string; workspace_id: string };

beforeAll(async () => {
  h = await createHarness({ RATE_LIMIT_PER_MINUTE: "1000" });
  server = await listen(h.app);
  token = await h.token();
  entity = await createEntityFor(h, token, { name: "Acme MCP" });
});
afterAll(async () => {
  await server?.close();
  await h?.close();
});

const MCP_HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };
const initialize = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
});

describe("tools/list", () => {
  it("lists recall, analyze and ingest with every mode, its route and its credential, and argument schemas", async () => {
    const { client, close } = await connect(server.url, { bearer: token });
    try {
      expect(client.getServerVersion()).toMatchObject({ name: "research-evidence-service" });
      expect(client.getInstructions()).toMatch(/recall reads, analyze researches, ingest writes/);
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual(["recall", "analyze", "ingest"]);
      const [recall, analyze, ingest] = tools;

      const recallModes = (recall!.inputSchema.properties as Record<string, { enum?: unknown[]; anyOf?: { enum?: unknown[] }[] }>).mode;
      const recallEnum = recallModes?.enum ?? recallModes?.anyOf?.find((s) => s.enum)?.enum;
      expect(recallEnum).toEqual(
        expect.arrayContaining([
          "search",
          "discover",
          "connection",
          "entities",
          "skills",
          "routines",
          "skill_runs",
          "collection_plan",
          "knowledge",
          "knowledge_context",
          "knowledge_changes",
          "knowledge_source",
          "intelligence",
          "actions",
        ]),
      );
      for (const mode of recallEnum as string[]) expect(recall!.description).toContain(`- ${mode}`);
      expect(recall!.description).toContain("- search (default): ");
      expect(recall!.description).toContain("Same as GET /agent/v1/context/recall; credential: a user bearer only (API keys are refused)");
      expect(recall!.description).toContain(
        "Same as GET /agent/v1/intelligence/summary; credential: a user bearer or an API key with scope 'ingest' or '*'",
      );
      expect(recall!.description).toMatch(/- insights: not served here/);

      for (const action of ["run", "start", "status", "skill"]) expect(analyze!.description).toContain(`- ${action}`);
      expect(analyze!.description).toContain("- run (default): ");
      for (const destination of ["context", "sources", "coverage", "evidence", "insight", "skills", "routine", "observations"]) {
        expect(ingest!.description).toContain(`- ${destination}`);
      }
      // Argument shapes shared with the routes: the ingest route's source items, the observation items.
      const ingestProps = ingest!.inputSchema.properties as Record<string, unknown>;
      expect(JSON.stringify(ingestProps.sources)).toContain('"platform"');
      expect(JSON.stringify(ingestProps.observations)).toContain('"source_id"');
      expect(JSON.stringify(ingestProps.routine)).toContain('"max_charge_cents"');
      expect(ingest!.inputSchema.type).toBe("object");
    } finally {
      await close();
    }
  });
});

describe("the reference client's contract", () => {
  it("takes every mode, action and destination of the agent client's tools (@crowdlisten/harness 2.2.3), and its argument names", async () => {
    type JsonSchema = { properties: Record<string, { enum?: string[]; anyOf?: { enum?: string[] }[] }> };
    const { V2_TOOLS } = (await import("@crowdlisten/harness/dist/harness-v2.js")) as unknown as {
      V2_TOOLS: { name: string; inputSchema: JsonSchema }[];
    };
    const { client, close } = await connect(server.url, { bearer: token });
    try {
      const { tools } = await client.listTools();
      const selector = { recall: "mode", analyze: "action", ingest: "destination" } as const;
      const values = (schema: JsonSchema, name: string) => {
        const property = schema.properties[name];
        return property?.enum ?? property?.anyOf?.find((s) => s.enum)?.enum ?? [];
      };
      for (const reference of V2_TOOLS) {
        const ours = tools.find((t) => t.name === reference.name);
        expect(ours, reference.name).toBeDefined();
        const field = selector[reference.name as keyof typeof selector];
        const schema = ours!.inputSchema as unknown as JsonSchema;
        expect(values(schema, field), reference.name).toEqual(expect.arrayContaining(values(reference.inputSchema, field)));
        // The arguments of the served modes keep the client's names.
        const served = ["query", "entity_id", "project_id", "insight_id", "content_id", "source_revision_id", "after", "limit", "offset"];
        const names = {
          recall: served,
          analyze: ["question", "entity_id", "job_id", "request_id", "skill_id", "content_ids", "depth"],
          ingest: ["title", "content", "sources", "coverage", "observations", "evidence", "skills", "routine", "skill_id"],
        }[reference.name as keyof typeof selector];
        for (const name of names) {
          expect(Object.keys(reference.inputSchema.properties), `${reference.name}.${name} in the client`).toContain(name);
          expect(Object.keys(schema.properties), `${reference.name}.${name} here`).toContain(name);
        }
      }
    } finally {
      await close();
    }
  });
});

describe("credentials, checked before MCP", () => {
  it("answers no credential with 401 and WWW-Authenticate, in the API's error shape, before reading the message", async () => {
    const res = await rawRequest(server.port, { method: "POST", path: "/mcp", headers: MCP_HEADERS, body: initialize });
    expect(res.status).toBe(401);
    expect(res.headers["www-authenticate"]).toMatch(/^Bearer realm=/);
    expect(JSON.parse(res.text)).toEqual({ detail: expect.stringContaining("credential is required"), code: "unauthorized" });

    await expect(connect(server.url, undefined)).rejects.toSatisfy(
      (err: unknown) => err instanceof StreamableHTTPError && err.code === 401,
    );
  });

  it("refuses an invalid bearer, an expired one and an unknown key with 401", async () => {
    const expired = await h.token(undefined, { expiresIn: "-1m" });
    for (const credential of [{ bearer: "not-a-jwt" }, { bearer: expired }, { apiKey: `svc_live_${"x".repeat(40)}` }]) {
      const res = await rawRequest(server.port, {
        method: "POST",
        path: "/mcp",
        headers: { ...MCP_HEADERS, ...headersFor(credential) },
        body: initialize,
      });
      expect(res.status, JSON.stringify(credential)).toBe(401);
      expect(JSON.parse(res.text).code).toBe("invalid_token");
    }
  });

  it("refuses a revoked key with 401 key_revoked, and records the refusal in the key's usage", async () => {
    const key = await createKeyFor(h, token, ["*"]);
    const connected = await connect(server.url, { apiKey: key.raw_key });
    await ok(connected.client, "recall", { mode: "connection" });
    await h.http.delete(`/api/user/keys/${key.key.id}`).set(bearer(token)).expect(200);

    // The session this client opened is no help: every request is authenticated again.
    await expect(connected.client.listTools()).rejects.toSatisfy((err: unknown) => err instanceof StreamableHTTPError && err.code === 401);
    await connected.close().catch(() => undefined);
    await expect(connect(server.url, { apiKey: key.raw_key })).rejects.toSatisfy(
      (err: unknown) => err instanceof StreamableHTTPError && err.code === 401 && /revoked/.test(err.message),
    );
    const usage = await h.http.get(`/api/user/keys/${key.key.id}/usage`).set(bearer(token)).expect(200);
    const records = usage.body.records as { method: string; route: string; status_code: number }[];
    expect(records).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ method: "GET", route: "/agent/v1/connection", status_code: 200 }),
        expect.objectContaining({ method: "POST", route: "/mcp", status_code: 401 }),
      ]),
    );
  });

  it("answers GET and DELETE on /mcp with 405 and Allow: POST (no sessions, no server stream)", async () => {
    for (const method of ["GET", "DELETE"]) {
      const res = await rawRequest(server.port, {
        method,
        path: "/mcp",
        headers: { ...headersFor({ bearer: token }), accept: "text/event-stream" },
      });
      expect(res.status, method).toBe(405);
      expect(res.headers.allow).toBe("POST");
      expect(JSON.parse(res.text)).toMatchObject({ code: "method_not_allowed" });
    }
  });
});

describe("each tool call under its route's rule", () => {
  it("refuses a key without the route's scope as a tool error with 403 insufficient_scope, and records it under the route", async () => {
    const exportKey = await createKeyFor(h, token, ["export"]);
    const { client, close } = await connect(server.url, { apiKey: exportKey.raw_key });
    try {
      // The connection check takes any key, so the session itself is fine.
      expect(await ok(client, "recall", { mode: "connection" })).toMatchObject({
        credential: "key",
        scopes: ["export"],
        client_interface: "mcp",
      });
      const denied = await refused(client, "recall", { mode: "entities" });
      expect(denied).toEqual({ status: 403, code: "insufficient_scope", detail: expect.stringContaining("scopes: *") });
      const plan = await refused(client, "recall", { mode: "collection_plan", entity_id: entity.id });
      expect(plan).toMatchObject({ status: 403, code: "insufficient_scope" });
    } finally {
      await close();
    }
    const usage = await h.http.get(`/api/user/keys/${exportKey.key.id}/usage`).set(bearer(token)).expect(200);
    const records = usage.body.records as { method: string; route: string; status_code: number; scope_used: string | null }[];
    expect(records.map((r) => `${r.method} ${r.route} ${r.status_code}`).sort()).toEqual([
      "GET /agent/v1/connection 200",
      "GET /agent/v1/ingest/collection-plan 403",
      "GET /api/entities 403",
    ]);
  });

  it("refuses a key on a route that takes only a user bearer with 401 bearer_required", async () => {
    const key = await createKeyFor(h, token, ["*"]);
    const { client, close } = await connect(server.url, { apiKey: key.raw_key });
    try {
      expect(await refused(client, "recall", { mode: "search", query: "pricing" })).toMatchObject({ status: 401, code: "bearer_required" });
      // The same key may list entities (a '*' route): the answer is the route's list.
      expect(await ok(client, "recall", { mode: "entities" })).toMatchObject({
        count: 1,
        entities: [expect.objectContaining({ id: entity.id })],
      });
    } finally {
      await close();
    }
  });

  it("carries the route's status and body: 422 detail lists, 404 for what the caller cannot see, 400 scope_required, 501 for modes not served", async () => {
    const other = await createEntityFor(h, await h.token(), { name: "Someone else's" });
    const { client, close } = await connect(server.url, { bearer: token });
    try {
      const invalid = await refused(client, "recall", { mode: "knowledge", entity_id: entity.id, limit: 1000 });
      expect(invalid).toEqual({
        status: 422,
        detail: [{ loc: ["query", "limit"], msg: "Input should be less than or equal to 100", type: "less_than_equal" }],
      });
      const mode = await refused(client, "recall", { mode: "everything" });
      expect(mode).toMatchObject({ status: 422, detail: [{ loc: ["arguments", "mode"], type: "enum" }] });
      const missing = await refused(client, "recall", { mode: "skills" });
      expect(missing).toMatchObject({ status: 422, detail: [{ loc: ["arguments", "entity_id"], type: "missing" }] });

      expect(await refused(client, "recall", { mode: "skills", entity_id: other.id })).toEqual({
        status: 404,
        detail: "Entity was not found.",
        code: "not_found",
      });
      expect(await refused(client, "recall", { mode: "knowledge" })).toMatchObject({ status: 400, code: "scope_required" });
      expect(await refused(client, "recall", { mode: "insights", entity_id: entity.id })).toMatchObject({
        status: 501,
        code: "not_implemented",
        detail: expect.stringContaining("'knowledge'"),
      });
      expect(
        await refused(client, "ingest", {
          destination: "execution",
          action_id: randomUUID(),
          executor_platform: "codex",
          approved_for_execution: true,
          steps: ["Draft the reply"],
        }),
      ).toEqual({ status: 404, detail: "Action was not found.", code: "not_found" });
    } finally {
      await close();
    }
  });

  it("counts tool calls by tool, mode and outcome in the operator metrics", async () => {
    const { client, close } = await connect(server.url, { bearer: token });
    try {
      await ok(client, "recall", { mode: "connection" });
      await refused(client, "recall", { mode: "skills", entity_id: randomUUID() });
    } finally {
      await close();
    }
    const metrics = await h.http.get("/metrics").auth("operator", "operator-password").expect(200);
    expect(metrics.text).toMatch(/mcp_tool_calls_total\{tool="recall",mode="connection",outcome="ok"\} [1-9]/);
    expect(metrics.text).toMatch(/mcp_tool_calls_total\{tool="recall",mode="skills",outcome="404"\} [1-9]/);
    expect(metrics.text).toMatch(/mcp_tool_call_duration_seconds_count\{tool="recall",mode="connection"\} [1-9]/);
    expect(metrics.text).toMatch(/http_request_duration_seconds_count\{method="POST",route="\/mcp",status="200"\} [1-9]/);
  });

  it("counts every tool call against the caller's rate limit (not the protocol's own messages) and answers 429 with retry_after", async () => {
    // The same app with a limit of 5 requests a minute.
    const limitedApp = await listen(createApp({ ...h.deps, config: { ...h.config, RATE_LIMIT_PER_MINUTE: 5 } }));
    const { client, close } = await connect(limitedApp.url, { bearer: await h.token() });
    try {
      // More protocol requests than the limit: none of them counts.
      for (let i = 0; i < 7; i++) await client.listTools();
      expect((await callTool(client, "recall", { mode: "entities" })).isError).toBe(false);
      // Tool calls do (a minute's window may turn over once in between, so allow two windows).
      const answers = [await callTool(client, "recall", { mode: "entities" })];
      while (!answers.at(-1)!.isError && answers.length < 12) answers.push(await callTool(client, "recall", { mode: "entities" }));
      expect(answers.at(-1)!.body).toEqual({
        status: 429,
        code: "rate_limited",
        detail: "Rate limit of 5 requests per minute exceeded.",
        retry_after: expect.any(Number),
      });
      expect(answers.length).toBeLessThanOrEqual(10);
    } finally {
      await close();
      await limitedApp.close();
    }
  });
});
