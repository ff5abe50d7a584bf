import { randomUUID } from "node:crypto";
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { expect } from "vitest";
import type { JobEvent, JobKind, TerminalState } from "../../src/jobs/events.js";
import { bearer, newEntity, until } from "../collection/support.js";
import type { Harness } from "../helpers/harness.js";

export { bearer, until };

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

/**
 * A local HTTP receiver on a random port. `answer` decides each request's fate by its index:
 * a status code to answer with, or "hang" to never answer.
 */
export async function startReceiver(answer: (index: number) => number | "hang" = () => 204) {
  const received: Received[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const index = received.length;
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString("utf8"), at: Date.now() });
      const outcome = answer(index);
      if (outcome === "hang") return;
      res.writeHead(outcome, { "content-type": "text/plain" }).end(outcome >= 400 ? "not now" : "ok");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    /** Resolves once at least `n` requests arrived. */
    waitFor: (n: number, timeoutMs = 15_000) => until(async () => received.length >= n && received, timeoutMs),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * A local HTTP server that accepts every connection and request and never answers, counting the
 * requests open at once (all of them, and per path) until the client gives up and closes them.
 */
export async function startSilentServer() {
  const open = new Map<string, number>();
  let openNow = 0;
  const stats = { arrived: 0, maxOpen: 0, maxOpenPerPath: new Map<string, number>(), arrivedPerPath: new Map<string, number>() };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = req.url ?? "/";
    req.resume();
    stats.arrived += 1;
    stats.arrivedPerPath.set(path, (stats.arrivedPerPath.get(path) ?? 0) + 1);
    openNow += 1;
    open.set(path, (open.get(path) ?? 0) + 1);
    stats.maxOpen = Math.max(stats.maxOpen, openNow);
    stats.maxOpenPerPath.set(path, Math.max(stats.maxOpenPerPath.get(path) ?? 0, open.get(path) ?? 0));
    res.on("close", () => {
      openNow -= 1;
      open.set(path, (open.get(path) ?? 1) - 1);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    urlFor: (path: string) => `http://127.0.0.1:${port}${path}`,
    stats,
    /** Requests open right now (on one path when given). */
    openNow: (path?: string) => (path === undefined ? openNow : (open.get(path) ?? 0)),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A signed-in person added to the workspace by its owner with `role`: their bearer and user id. */
export async function addMember(h: Harness, ownerToken: string, workspaceId: string, role: "viewer" | "editor" | "admin") {
  const sub = `member-${randomUUID()}`;
  const token = await h.token(sub);
  expect((await h.http.get("/agent/v1/connection").set(bearer(token))).status).toBe(200);
  const user = await h.deps.db.user.findUniqueOrThrow({ where: { sub } });
  const res = await h.http.post(`/api/workspaces/${workspaceId}/members`).set(bearer(ownerToken)).send({ user_id: user.id, role });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return { token, userId: user.id };
}

export interface EndpointView {
  id: string;
  state: string;
  consecutive_failures: number;
  paused_until: string | null;
  disabled_at: string | null;
  disabled_reason: string | null;
}

export async function endpointOf(h: Harness, token: string, workspaceId: string, endpointId: string): Promise<EndpointView> {
  const res = await h.http.get(`/api/workspaces/${workspaceId}/webhooks/${endpointId}`).set(bearer(token));
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as EndpointView;
}

/** A fresh user with a workspace of their own (made with their first entity). */
export async function newWorkspace(h: Harness) {
  const token = await h.token();
  const entity = await newEntity(h, token);
  return { token, workspaceId: entity.workspace_id, entityId: entity.id };
}

export async function registerEndpoint(h: Harness, token: string, workspaceId: string, body: Record<string, unknown>) {
  const res = await h.http.post(`/api/workspaces/${workspaceId}/webhooks`).set(bearer(token)).send(body);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as { id: string; secret: string; url: string; event_types: string[] };
}

export function jobEvent(workspaceId: string, kind: JobKind = "collection_job", status: TerminalState = "completed"): JobEvent {
  return {
    kind,
    id: randomUUID(),
    workspaceId,
    status,
    occurredAt: new Date(),
    data: { entity_id: randomUUID(), next: "/agent/v1/ingest/collection/jobs/x" },
  };
}

export interface DeliveryView {
  id: string;
  message_id: string;
  event_type: string;
  status: string;
  attempts: number;
  last_status_code: number | null;
  last_error: string | null;
  last_attempt_at: string | null;
  next_attempt_at: string | null;
  delivered_at: string | null;
}

export async function deliveriesOf(h: Harness, token: string, workspaceId: string, endpointId: string): Promise<DeliveryView[]> {
  const res = await h.http.get(`/api/workspaces/${workspaceId}/webhooks/${endpointId}/deliveries`).set(bearer(token));
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.deliveries as DeliveryView[];
}

/** Waits until the endpoint's only delivery satisfies `done`, and answers it. */
export async function awaitDelivery(
  h: Harness,
  token: string,
  workspaceId: string,
  endpointId: string,
  done: (d: DeliveryView) => boolean,
  timeoutMs = 15_000,
): Promise<DeliveryView> {
  return until(async () => {
    const [delivery] = await deliveriesOf(h, token, workspaceId, endpointId);
    return delivery && done(delivery) ? delivery : undefined;
  }, timeoutMs);
}
