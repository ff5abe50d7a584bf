import type { Harness } from "./harness.js";

/** Test helpers for entities, keys and ingest batches, all through the real HTTP API. */
export const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

/** Creates the token's account, as its first authenticated request does (operator commands need it to exist). */
export async function signIn(h: Harness, token: string): Promise<void> {
  const res = await h.http.get("/agent/v1/connection").set(bearer(token));
  if (res.status !== 200) throw new Error(`sign-in request failed: ${res.status} ${JSON.stringify(res.body)}`);
}

export async function createEntityFor(h: Harness, token: string, body: Record<string, unknown> = {}) {
  const res = await h.http
    .post("/api/entities")
    .set(bearer(token))
    .send({ name: "Acme", ...body });
  if (res.status !== 201) throw new Error(`entity creation failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as { id: string; workspace_id: string; project_id: string | null; name: string };
}

export async function createKeyFor(h: Harness, token: string, scopes: string[]) {
  const res = await h.http
    .post("/api/user/keys")
    .set(bearer(token))
    .send({ name: `key ${scopes.join(",")}`, scopes });
  if (res.status !== 201) throw new Error(`key creation failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as { key: { id: string }; raw_key: string };
}

export function source(n: number, extra: Record<string, unknown> = {}) {
  return {
    id: `post-${n}`,
    title: `Post ${n}`,
    url: `https://example.com/posts/${n}`,
    platform: "reddit",
    content: `Original post number ${n}: the onboarding flow is confusing but support was quick.`,
    author: `author-${n}`,
    published_at: "2026-01-02T03:04:05Z",
    engagement: { likes: n, comments: 2 },
    ...extra,
  };
}

export function comment(n: number, extra: Record<string, unknown> = {}) {
  return {
    id: `comment-${n}`,
    text: `Comment ${n}: I agree, pricing is unclear.`,
    author: `commenter-${n}`,
    likes: 1,
    replies: 0,
    ...extra,
  };
}

export async function countRows(h: Harness, entityId: string): Promise<{ sources: number; comments: number }> {
  const rows = await h.deps.db.$queryRaw<{ kind: string; n: number }[]>`
    SELECT kind, count(*)::int AS n FROM content_store WHERE entity_id = ${entityId}::uuid GROUP BY kind`;
  return {
    sources: rows.find((r) => r.kind === "source")?.n ?? 0,
    comments: rows.find((r) => r.kind === "comment")?.n ?? 0,
  };
}
