import type { AuthRule } from "../../../platform/auth.js";
import type { AnyRoute } from "../../../platform/http/route.js";
import type { ToolDefinition } from "./types.js";

/**
 * A tool's description for tools/list: what it does, then every mode with its equivalent
 * routes and the credential they take, read from the mounted route table so the text
 * cannot drift from the checks.
 */
export function describeTool(tool: ToolDefinition, routes: ReadonlyMap<string, AnyRoute>): string {
  const fallback = tool.defaultMode({});
  const lines = Object.entries(tool.modes).map(([name, mode]) => {
    const label = name === fallback ? `${name} (default)` : name;
    if (mode.routes.length === 0) return `- ${label}: ${mode.summary}.`;
    const served = mode.routes.map((key) => routes.get(key));
    if (served.some((route) => route === undefined)) return `- ${label}: ${mode.summary}. Not served by this deployment.`;
    const rules = [...new Set(served.map((route) => credentialText((route as AnyRoute).auth)))];
    const paths = mode.routes.map((key) => key.replace(/:([A-Za-z_]+)/g, "{$1}"));
    return `- ${label}: ${mode.summary}. Same as ${paths.join(" and ")}; credential: ${rules.join("; ")}.`;
  });
  return `${tool.intro}\n\nChoose with \`${tool.selector}\`:\n${lines.join("\n")}`;
}

export function credentialText(rule: AuthRule): string {
  if ("public" in rule) return "none";
  const keys = rule.keys.length > 0 ? `an API key with scope ${rule.keys.map((k) => `'${k}'`).join(" or ")}` : "";
  const base = rule.bearer ? (keys ? `a user bearer or ${keys}` : "a user bearer only (API keys are refused)") : keys;
  return rule.rawExport ? `${base}, with raw export enabled` : base;
}
