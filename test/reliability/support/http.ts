import { createServer, type IncomingHttpHeaders, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Express } from "express";
import { expect } from "vitest";
import { ERROR_CODES } from "../../../src/platform/errors.js";
import type { AnyRoute } from "../../../src/platform/http/route.js";

/**
 * A real listening server around an app and a raw HTTP client that sends exactly the
 * bytes it is given (invalid UTF-8, odd headers) and does not wait for a streamed (SSE)
 * response to end: it reads the status and headers, then hangs up.
 */
export interface Listening {
  server: Server;
  port: number;
  url: string;
  close: () => Promise<void>;
}

export async function listen(app: Express): Promise<Listening> {
  const server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    server,
    port,
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  /** True when the answer was an event stream (read only up to its headers). */
  streamed: boolean;
}

export interface RawRequest {
  method: string;
  path: string;
  headers?: Record<string, string | string[]>;
  body?: string | Buffer;
  timeoutMs?: number;
}

export function rawRequest(port: number, req: RawRequest): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | string[]> = { ...(req.headers ?? {}) };
    if (req.body !== undefined && headers["content-length"] === undefined) headers["content-length"] = String(Buffer.byteLength(req.body));
    const outgoing = request({ host: "127.0.0.1", port, method: req.method, path: req.path, headers, agent: false }, (res) => {
      const streamed = String(res.headers["content-type"] ?? "").startsWith("text/event-stream");
      if (streamed) {
        res.destroy();
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text: "", streamed: true });
        return;
      }
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString("utf8"), streamed: false }),
      );
      res.on("error", reject);
    });
    outgoing.setTimeout(req.timeoutMs ?? 15_000, () => outgoing.destroy(new Error(`no answer to ${req.method} ${req.path} in time`)));
    outgoing.on("error", reject);
    if (req.body !== undefined) outgoing.write(req.body);
    outgoing.end();
  });
}

/** The statuses any route may answer besides its own documented ones. */
export const PLATFORM_STATUSES = [400, 401, 402, 403, 404, 409, 413, 415, 422, 429, 503];

const STACK_TRACE = /\n\s+at\s.+:\d+:\d+|node_modules|\/work\/|\.ts:\d+|PrismaClient|Invalid `prisma\./;

/**
 * Asserts an answer is documented: a status the route lists or a platform error status,
 * never a 5xx the route does not document; error bodies in the documented shapes; no
 * stack trace or internal detail anywhere; success bodies matching the route's schema.
 */
export function expectDocumented(route: AnyRoute, res: RawResponse, context: string): void {
  const where = `${route.method.toUpperCase()} ${route.path} ${context} -> ${res.status} ${res.text.slice(0, 400)}`;
  const documented = Object.keys(route.responses).map(Number);
  expect([...documented, ...PLATFORM_STATUSES], where).toContain(res.status);
  expect(STACK_TRACE.test(res.text), `stack trace or internals in ${where}`).toBe(false);
  if (res.streamed) {
    expect(res.status, where).toBe(200);
    return;
  }
  if (res.status >= 400) expectErrorBody(res, where);
  else if (res.status !== 204 && res.text.length > 0) {
    const spec = route.responses[res.status];
    if (spec?.schema && (spec.contentType ?? "application/json") === "application/json") {
      const parsed = spec.schema.safeParse(JSON.parse(res.text));
      expect(parsed.success, `${where}\nbody does not match the documented schema: ${parsed.success ? "" : parsed.error.message}`).toBe(
        true,
      );
    }
  }
}

export function expectErrorBody(res: RawResponse, where: string): void {
  expect(String(res.headers["content-type"] ?? ""), where).toMatch(/^application\/json/);
  const body = JSON.parse(res.text) as { detail: unknown; code?: unknown };
  if (res.status === 422) {
    expect(Array.isArray(body.detail), where).toBe(true);
    const issues = body.detail as { loc: unknown; msg: unknown; type: unknown }[];
    expect(issues.length, where).toBeGreaterThan(0);
    for (const issue of issues) {
      expect(Array.isArray(issue.loc), where).toBe(true);
      for (const part of issue.loc as unknown[]) expect(["string", "number"], where).toContain(typeof part);
      expect(typeof issue.msg, where).toBe("string");
      expect(typeof issue.type, where).toBe("string");
    }
    return;
  }
  expect(typeof body.detail, where).toBe("string");
  expect(typeof body.code, where).toBe("string");
  expect(Object.keys(ERROR_CODES), where).toContain(body.code);
  expect(ERROR_CODES[body.code as keyof typeof ERROR_CODES], where).toBe(res.status);
  if (res.status === 401) expect(res.headers["www-authenticate"], where).toMatch(/^Bearer/);
  if (res.status === 429) expect(res.headers["retry-after"], where).toMatch(/^\d+$/);
}
