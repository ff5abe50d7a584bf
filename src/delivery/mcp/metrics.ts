import { Counter, Histogram, type Registry } from "prom-client";

/**
 * Tool calls of the MCP endpoint, beside the HTTP metrics (which see each MCP request as one
 * `POST /mcp`): `mcp_tool_calls_total{tool, mode, outcome}` (`ok`, or the refusal's HTTP
 * status) and `mcp_tool_call_duration_seconds{tool, mode}`.
 */
export interface ToolMetrics {
  observe: (tool: string, mode: string, outcome: string, seconds: number) => void;
}

export function registerToolMetrics(registry: Registry): ToolMetrics {
  const calls = new Counter({
    name: "mcp_tool_calls_total",
    help: "MCP tool calls by tool, mode and outcome (ok, or the HTTP status of the refusal)",
    labelNames: ["tool", "mode", "outcome"] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: "mcp_tool_call_duration_seconds",
    help: "MCP tool call duration by tool and mode (an analysis run lasts until its result)",
    labelNames: ["tool", "mode"] as const,
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
    registers: [registry],
  });
  return {
    observe: (tool, mode, outcome, seconds) => {
      calls.inc({ tool, mode, outcome });
      duration.observe({ tool, mode }, seconds);
    },
  };
}
