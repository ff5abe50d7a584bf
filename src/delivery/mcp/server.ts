// The protocol-level Server: tools/list and tools/call are answered here, because the
// high-level McpServer validates arguments itself and answers refusals as plain text,
// while these tools answer the equivalent route's status and body (see docs/api.md).
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { Credential } from "../../platform/auth.js";
import { SERVICE_VERSION } from "../../platform/deps.js";
import { ValidationFailed } from "../../platform/errors.js";
import { toHttpError } from "../../platform/http/errors.js";
import { type CallContext, ToolFailure, type ToolServices } from "./invoke.js";
import { analyzeTool } from "./tools/analyze.js";
import { describeTool } from "./tools/describe.js";
import { ingestTool } from "./tools/ingest.js";
import { recallTool } from "./tools/recall.js";
import type { Args, ToolDefinition } from "./tools/types.js";

export const TOOLS: readonly ToolDefinition[] = [recallTool, analyzeTool, ingestTool];

const INSTRUCTIONS =
  "Research Evidence Service. recall reads, analyze researches, ingest writes; each mode is one operation of the HTTP API " +
  "with its credential rule, rate limit and answer. A refused call is a tool error whose structured content carries the " +
  "HTTP status and the route's body ({detail, code}, or the 422 detail list). Every quote in an analysis is verbatim " +
  "from a stored original.";

/** The tools/list entries, built once per app from the tool definitions and the mounted routes. */
export function listTools(services: Pick<ToolServices, "routes">): Tool[] {
  return TOOLS.map((tool) => ({
    name: tool.name,
    title: tool.title,
    description: describeTool(tool, services.routes),
    inputSchema: z.toJSONSchema(tool.inputSchema, { io: "input", target: "draft-7", unrepresentable: "any" }) as Tool["inputSchema"],
  }));
}

export interface SessionContext {
  services: ToolServices;
  credential: Credential | undefined;
  requestId: string;
  tools: Tool[];
}

/** A server for one HTTP request (stateless: any web process answers any call). */
export function createMcpServer(session: SessionContext): Server {
  const server = new Server(
    { name: "research-evidence-service", title: "Research Evidence Service", version: SERVICE_VERSION },
    { capabilities: { tools: {} }, instructions: INSTRUCTIONS },
  );
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: session.tools }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const tool = TOOLS.find((t) => t.name === request.params.name);
    if (!tool)
      throw new McpError(ErrorCode.InvalidParams, `Unknown tool ${request.params.name}; the tools are recall, analyze and ingest.`);
    const progressToken = request.params._meta?.progressToken;
    const ctx: CallContext = {
      services: session.services,
      credential: session.credential,
      requestId: session.requestId,
      signal: extra.signal,
      progress: async (progress, total, message) => {
        if (progressToken === undefined) return;
        await extra.sendNotification({
          method: "notifications/progress",
          params: { progressToken, progress, ...(total === undefined ? {} : { total }), message },
        });
      },
    };
    return callTool(tool, ctx, request.params.arguments ?? {});
  });
  return server;
}

async function callTool(tool: ToolDefinition, ctx: CallContext, args: Args): Promise<CallToolResult> {
  const { logger } = ctx.services.deps;
  const started = Date.now();
  const selected = args[tool.selector] ?? tool.defaultMode(args);
  const modeName = typeof selected === "string" && Object.hasOwn(tool.modes, selected) ? selected : undefined;
  try {
    if (!modeName) throw refuseMode(tool, selected);
    const body = await tool.modes[modeName]!.run(ctx, args);
    logger.info({ requestId: ctx.requestId, tool: tool.name, mode: modeName, status: "ok", ms: Date.now() - started }, "tool call");
    ctx.services.metrics.observe(tool.name, modeName, "ok", (Date.now() - started) / 1000);
    return { content: [{ type: "text", text: JSON.stringify(body, null, 2) }], structuredContent: body };
  } catch (err) {
    const failure = asFailure(err, ctx, tool.name);
    logger.info(
      { requestId: ctx.requestId, tool: tool.name, mode: modeName ?? null, status: failure.status, ms: Date.now() - started },
      "tool call",
    );
    ctx.services.metrics.observe(tool.name, modeName ?? "invalid", String(failure.status), (Date.now() - started) / 1000);
    const body = { ...failure.body, status: failure.status };
    return { isError: true, content: [{ type: "text", text: JSON.stringify(body, null, 2) }], structuredContent: body };
  }
}

function refuseMode(tool: ToolDefinition, selected: unknown): ValidationFailed {
  const allowed = Object.keys(tool.modes).map((m) => `'${m}'`);
  const msg =
    typeof selected === "string"
      ? `Input should be ${allowed.slice(0, -1).join(", ")} or ${allowed.at(-1)}`
      : "Input should be a valid string";
  return new ValidationFailed([{ loc: ["arguments", tool.selector], msg, type: typeof selected === "string" ? "enum" : "string_type" }]);
}

function asFailure(err: unknown, ctx: CallContext, toolName: string): ToolFailure {
  if (err instanceof ToolFailure) return err;
  // A call the client cancelled (or whose request closed) has no one to answer: not a failure of ours.
  if (ctx.signal.aborted) return new ToolFailure(499, { detail: "The client cancelled the call.", code: "cancelled" });
  const httpError = toHttpError(err);
  const failure = ToolFailure.from(httpError);
  if (failure.status >= 500) ctx.services.deps.logger.error({ err, requestId: ctx.requestId, tool: toolName }, "tool call failed");
  return failure;
}
