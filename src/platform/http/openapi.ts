import { z } from "zod";
import type { AnyRoute, RouteRole } from "./route.js";

/**
 * Builds the OpenAPI 3.1 document from the route table. Request schemas are rendered
 * in "input" mode, so defaults and null-tolerant optionals read as a client sends them.
 */
function jsonSchema(schema: z.ZodType, io: "input" | "output"): Record<string, unknown> {
  const out = z.toJSONSchema(schema, { io, unrepresentable: "any", target: "draft-2020-12" }) as Record<string, unknown>;
  delete out.$schema;
  return out;
}

const toOpenApiPath = (path: string) => path.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, "{$1}");

function parameters(route: AnyRoute) {
  const params: Record<string, unknown>[] = [];
  for (const [where, schema] of [
    ["path", route.params],
    ["query", route.query],
  ] as const) {
    if (!schema) continue;
    const shape = jsonSchema(schema, "input") as { properties?: Record<string, unknown>; required?: string[] };
    for (const [name, prop] of Object.entries(shape.properties ?? {})) {
      params.push({ name, in: where, required: where === "path" || (shape.required ?? []).includes(name), schema: prop });
    }
  }
  for (const header of route.headers ?? []) {
    params.push({
      name: header.name,
      in: "header",
      required: header.required,
      description: header.description,
      schema: { type: "string" },
    });
  }
  return params;
}

function security(route: AnyRoute) {
  if ("public" in route.auth) return [];
  const options: Record<string, string[]>[] = [];
  if (route.auth.bearer) options.push({ userBearer: [] });
  if (route.auth.keys.length > 0) options.push({ apiKey: [...route.auth.keys] });
  return options;
}

const errorBody = {
  type: "object",
  required: ["detail", "code"],
  properties: { detail: { type: "string" }, code: { type: "string" } },
};

const validationBody = {
  type: "object",
  required: ["detail"],
  properties: {
    detail: {
      type: "array",
      items: {
        type: "object",
        required: ["loc", "msg", "type"],
        properties: {
          loc: { type: "array", items: { anyOf: [{ type: "string" }, { type: "integer" }] } },
          msg: { type: "string" },
          type: { type: "string" },
        },
      },
    },
  },
};

/** The route's access rule as one sentence of its description. */
function roleRule(role: RouteRole): string {
  if (role === "public") return "**Access:** public, no credential.";
  if (role === "account") return "**Access:** the caller's own account; no workspace role is checked.";
  const lower = role === "viewer" ? "" : " A member with a lower role gets 403 `forbidden`;";
  const outsider = role === "viewer" ? " A non-member gets 404" : " a non-member gets 404";
  return `**Access:** ${role} or above in the workspace the request touches.${lower}${outsider}, as for an unknown id.`;
}

export function buildOpenApi(routes: AnyRoute[], info: { version: string; serverUrl?: string }) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const responses: Record<string, unknown> = {};
    for (const [status, spec] of Object.entries(route.responses)) {
      responses[status] = {
        description: spec.description,
        ...(spec.schema || spec.contentType
          ? {
              content: {
                [spec.contentType ?? "application/json"]: spec.schema ? { schema: jsonSchema(spec.schema, "output") } : {},
              },
            }
          : {}),
      };
    }
    responses["422"] ??= {
      description: "Validation error",
      content: { "application/json": { schema: { $ref: "#/components/schemas/ValidationError" } } },
    };
    if (route.role !== "account" && route.role !== "public" && route.role !== "viewer") {
      responses["403"] ??= { description: `Your role in the workspace is below ${route.role} (forbidden)` };
    }
    responses.default = { description: "Error", content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } } };

    const rule = roleRule(route.role);
    const operation: Record<string, unknown> = {
      summary: route.summary,
      description: route.description ? `${route.description}\n\n${rule}` : rule,
      "x-required-role": route.role,
      tags: route.tags,
      operationId: `${route.method}_${route.path.replace(/[^A-Za-z0-9]+/g, "_").replace(/^_|_$/g, "")}`,
      parameters: parameters(route),
      security: security(route),
      responses,
    };
    if (route.body) {
      operation.requestBody = { required: true, content: { "application/json": { schema: jsonSchema(route.body, "input") } } };
    }
    const path = toOpenApiPath(route.path);
    paths[path] ??= {};
    (paths[path] as Record<string, unknown>)[route.method] = operation;
  }

  return {
    openapi: "3.1.0",
    info: {
      title: "Research Evidence Service API",
      version: info.version,
      description:
        "Collects source material about tracked entities, keeps every original, proves coverage, and answers with insights whose every quote is verbatim.",
    },
    ...(info.serverUrl ? { servers: [{ url: info.serverUrl }] } : {}),
    paths,
    components: {
      securitySchemes: {
        userBearer: { type: "http", scheme: "bearer", bearerFormat: "JWT", description: "User session bearer from the identity provider." },
        apiKey: { type: "http", scheme: "bearer", description: "Scoped API key (svc_live_…) sent as a bearer, or in X-API-Key." },
      },
      schemas: { Error: errorBody, ValidationError: validationBody },
    },
  };
}
