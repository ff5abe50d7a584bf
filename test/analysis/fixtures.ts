import { createHash, randomUUID } from "node:crypto";
import type { Harness } from "../helpers/harness.js";
import { randomId } from "../helpers/harness.js";

/**
 * Test data for the analysis, search and enrichment tests: a user with a workspace and an
 * entity, and stored originals. Each test file arranges its own.
 */
export interface Tenant {
  sub: string;
  token: string;
  userId: string;
  workspaceId: string;
  projectId: string;
  entityId: string;
}

export async function createTenant(h: Harness, name = "Acme"): Promise<Tenant> {
  const sub = randomId("user-");
  const token = await h.token(sub);
  const db = h.deps.db;
  const user = await db.user.upsert({ where: { sub }, create: { sub }, update: {} });
  const workspace = await db.workspace.create({ data: { name: `${name} workspace` } });
  await db.workspaceMember.create({ data: { workspaceId: workspace.id, userId: user.id, role: "owner" } });
  const project = await db.project.create({ data: { workspaceId: workspace.id, name: `${name} project` } });
  const entity = await db.entity.create({ data: { workspaceId: workspace.id, projectId: project.id, name } });
  return { sub, token, userId: user.id, workspaceId: workspace.id, projectId: project.id, entityId: entity.id };
}

export async function addEntity(h: Harness, tenant: Tenant, name: string, projectId: string | null = null): Promise<string> {
  const entity = await h.deps.db.entity.create({ data: { workspaceId: tenant.workspaceId, projectId, name } });
  return entity.id;
}

export interface SourceInput {
  platform: string;
  content: string;
  title?: string;
  url?: string;
  author?: string;
  published_at?: string;
  kind?: string;
}

/** Stores originals for an entity and answers their ids, in order. */
export async function storeSources(h: Harness, tenant: Tenant, sources: SourceInput[], entityId = tenant.entityId): Promise<string[]> {
  const ids: string[] = [];
  for (const s of sources) {
    const id = randomUUID();
    const hash = createHash("sha256").update(s.content).digest("hex");
    await h.deps.db.content.create({
      data: {
        id,
        entityId,
        workspaceId: tenant.workspaceId,
        kind: s.kind ?? "source",
        platform: s.platform,
        url: s.url ?? `https://example.com/${id}`,
        title: s.title ?? "",
        content: s.content,
        author: s.author ?? "someone",
        publishedAt: s.published_at ? new Date(s.published_at) : null,
        contentHash: hash,
        dedupKey: `${s.platform}:${hash}:${id}`,
      },
    });
    ids.push(id);
  }
  return ids;
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
