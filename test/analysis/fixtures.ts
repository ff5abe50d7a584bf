import { randomUUID } from "node:crypto";
import type { Harness } from "../helpers/harness.js";
import { randomId } from "../helpers/harness.js";

/**
 * Test data for the analysis, search and enrichment tests, arranged through the real API
 * (POST /api/entities, POST /agent/v1/ingest/content). Only a project, which has no
 * route of its own, is inserted directly. Each test file arranges its own.
 */
export interface Tenant {
  sub: string;
  token: string;
  userId: string;
  workspaceId: string;
  projectId: string;
  entityId: string;
}

const auth = (token: string) => ({ Authorization: `Bearer ${token}` });

export async function createEntity(
  h: Harness,
  token: string,
  body: Record<string, unknown>,
): Promise<{ id: string; workspace_id: string }> {
  const res = await h.http.post("/api/entities").set(auth(token)).send(body);
  if (res.status !== 201) throw new Error(`entity creation failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as { id: string; workspace_id: string };
}

/** A user with a workspace holding one project and one entity in it. */
export async function createTenant(h: Harness, name = "Acme"): Promise<Tenant> {
  const sub = randomId("user-");
  const token = await h.token(sub);
  const first = await createEntity(h, token, { name: `${name} (setup)` });
  const project = await h.deps.db.project.create({ data: { workspaceId: first.workspace_id, name: `${name} research` } });
  const entity = await createEntity(h, token, { name, project_id: project.id, workspace_id: first.workspace_id });
  const user = await h.deps.db.user.findUniqueOrThrow({ where: { sub } });
  return { sub, token, userId: user.id, workspaceId: first.workspace_id, projectId: project.id, entityId: entity.id };
}

export async function addEntity(h: Harness, tenant: Tenant, name: string, projectId: string | null = null): Promise<string> {
  const entity = await createEntity(h, tenant.token, {
    name,
    workspace_id: tenant.workspaceId,
    ...(projectId ? { project_id: projectId } : {}),
  });
  return entity.id;
}

export interface SourceInput {
  platform: string;
  content: string;
  title?: string;
  url?: string;
  author?: string;
  published_at?: string;
  metadata?: Record<string, unknown>;
}

/** Stores originals for an entity through the ingest API and answers their ids, in order. */
export async function storeSources(h: Harness, tenant: Tenant, sources: SourceInput[], entityId = tenant.entityId): Promise<string[]> {
  const res = await h.http
    .post("/agent/v1/ingest/content")
    .set(auth(tenant.token))
    .send({
      entity_id: entityId,
      sources: sources.map((s) => ({ id: randomUUID(), url: `https://example.com/${randomUUID()}`, author: "someone", ...s })),
    });
  if (res.status !== 200) throw new Error(`ingest failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.content_ids as string[];
}

/** Each row's stored feedback kind and confidence, in the order of `ids`. */
export async function storedKinds(h: Harness, ids: string[]): Promise<[string | null, number | null][]> {
  const rows = await h.deps.db.content.findMany({
    where: { id: { in: ids } },
    select: { id: true, enrichment: { select: { feedbackKind: true, feedbackKindConfidence: true } } },
  });
  return rows
    .sort((a, b) => ids.indexOf(a.id) - ids.indexOf(b.id))
    .map((r) => [r.enrichment?.feedbackKind ?? null, r.enrichment?.feedbackKindConfidence ?? null]);
}

/** Polls `check` until it answers a value other than undefined, or fails after `timeoutMs`. */
export async function waitFor<T>(check: () => Promise<T | undefined>, timeoutMs = 15_000, what = "condition"): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
