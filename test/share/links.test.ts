import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { allRoutes } from "../../src/routes.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { person } from "../workspaces/support.js";
import { buildSharedWorld, type SharedWorld, share } from "./fixtures.js";

/**
 * Share links: created by editors for a resource of their workspace, listed by members, revoked at
 * once; the token opens its one page (and a shared analysis's event stream) and nothing else. Real
 * HTTP, PostgreSQL and Redis, with the analysis and enrichment workers running.
 */
let h: Harness;
let w: SharedWorld;
const auth = (token: string) => ({ Authorization: `Bearer ${token}` });
const pathOf = (url: string) => new URL(url).pathname;
const tokenOf = (url: string) => pathOf(url).split("/").at(-1) as string;

beforeAll(async () => {
  h = await createHarness();
  w = await buildSharedWorld(h);
}, 90_000);
afterAll(async () => {
  await w?.close();
  await h?.close();
});

async function page(path: string) {
  return fetch(`${w.baseUrl}${path}`, { redirect: "manual" });
}

describe("creating a share link", () => {
  it("answers a URL that opens the page without signing in, with the headers of a private page", async () => {
    const before = Date.now();
    const link = await share(h, w.tenant.token, "analysis", w.analysisId);
    expect(link.state).toBe("active");
    expect(link.workspace_id).toBe(w.tenant.workspaceId);
    expect(pathOf(link.url)).toMatch(/^\/share\/[A-Za-z0-9_-]{43}$/);
    const expires = Date.parse(link.expires_at) - before;
    expect(expires).toBeGreaterThan(7 * 86_400_000 - 5_000);
    expect(expires).toBeLessThan(7 * 86_400_000 + 5_000);

    // Only the token's hash is stored.
    const row = await h.deps.db.shareLink.findUniqueOrThrow({ where: { id: link.id } });
    expect(row.tokenHash).toBe(createHash("sha256").update(tokenOf(link.url)).digest("hex"));
    expect(JSON.stringify(row)).not.toContain(tokenOf(link.url));

    const res = await page(pathOf(link.url));
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    expect(res.headers.get("content-security-policy")).toMatch(/default-src 'none'/);
    expect(res.headers.get("content-security-policy")).not.toMatch(/unsafe-inline|unsafe-eval/);
    expect(res.headers.get("referrer-policy")).toBe("no-referrer");
    expect(res.headers.get("x-robots-tag")).toMatch(/noindex/);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const body = await res.text();
    expect(body).toContain("What do users complain about and what do they ask for?");
    expect(body).toMatch(/<meta name="robots" content="noindex/);
  });

  it("opens a knowledge record and an entity page", async () => {
    const record = await share(h, w.tenant.token, "knowledge_record", w.insightId);
    const recordPage = await (await page(pathOf(record.url))).text();
    expect(recordPage).toContain("Sync is the top complaint");
    expect(recordPage).toContain(w.recordQuote);

    const entity = await share(h, w.tenant.token, "entity", w.tenant.entityId, 3600);
    expect(Date.parse(entity.expires_at) - Date.now()).toBeLessThanOrEqual(3_600_000);
    const entityPage = await page(pathOf(entity.url));
    expect(entityPage.status).toBe(200);
    expect(await entityPage.text()).toContain("Acme Notes");
  });

  it("refuses a lifetime outside 60 s to 90 days, an unknown kind and a malformed id, storing nothing", async () => {
    const before = await h.deps.db.shareLink.count();
    for (const body of [
      { resource: "analysis", id: w.analysisId, expires_in: 59 },
      { resource: "analysis", id: w.analysisId, expires_in: 90 * 86_400 + 1 },
      { resource: "analysis", id: w.analysisId, expires_in: "7d" },
      { resource: "workspace", id: w.tenant.workspaceId },
      { resource: "entity", id: "not-a-uuid" },
      { resource: "entity" },
    ]) {
      const res = await h.http.post("/api/share-links").set(auth(w.tenant.token)).send(body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(res.body.detail[0].loc[0], JSON.stringify(body)).toBe("body");
    }
    const unknown = await h.http
      .post("/api/share-links")
      .set(auth(w.tenant.token))
      .send({ resource: "knowledge_record", id: "00000000-0000-4000-8000-000000000000" });
    expect(unknown.status).toBe(404);
    expect(await h.deps.db.shareLink.count()).toBe(before);
  });
});

describe("who may share", () => {
  it("lets another workspace neither create, list nor revoke links of this one", async () => {
    const stranger = await person(h);
    const link = await share(h, w.tenant.token, "entity", w.tenant.entityId);
    for (const [resource, id] of [
      ["analysis", w.analysisId],
      ["knowledge_record", w.insightId],
      ["entity", w.tenant.entityId],
    ]) {
      const res = await h.http.post("/api/share-links").set(auth(stranger.token)).send({ resource, id });
      expect(res.status, resource).toBe(404);
      expect(res.body.code).toBe("not_found");
    }
    const list = await h.http.get(`/api/share-links?workspace_id=${w.tenant.workspaceId}`).set(auth(stranger.token));
    expect(list.status).toBe(404);
    const revoke = await h.http.delete(`/api/share-links/${link.id}`).set(auth(stranger.token));
    expect(revoke.status).toBe(404);
    expect((await page(pathOf(link.url))).status).toBe(200);
  });

  it("lets a viewer list links but neither create nor revoke one", async () => {
    const viewer = await person(h);
    await h.http
      .post(`/api/workspaces/${w.tenant.workspaceId}/members`)
      .set(auth(w.tenant.token))
      .send({ user_id: viewer.userId, role: "viewer" })
      .expect(201);
    const link = await share(h, w.tenant.token, "analysis", w.analysisId);
    const create = await h.http.post("/api/share-links").set(auth(viewer.token)).send({ resource: "analysis", id: w.analysisId });
    expect(create.status).toBe(403);
    expect(create.body.code).toBe("forbidden");
    const list = await h.http.get(`/api/share-links?workspace_id=${w.tenant.workspaceId}&resource=analysis`).set(auth(viewer.token));
    expect(list.status).toBe(200);
    expect(list.body.links.map((l: { id: string }) => l.id)).toContain(link.id);
    expect(JSON.stringify(list.body)).not.toMatch(/\/share\//);
    expect((await h.http.delete(`/api/share-links/${link.id}`).set(auth(viewer.token))).status).toBe(403);
    expect((await page(pathOf(link.url))).status).toBe(200);
  });
});

describe("what a token opens", () => {
  it("stops at once when revoked; revoking again answers the same and is audited once", async () => {
    const link = await share(h, w.tenant.token, "analysis", w.analysisId);
    expect((await page(pathOf(link.url))).status).toBe(200);
    await h.http.delete(`/api/share-links/${link.id}`).set(auth(w.tenant.token)).expect(204);
    await h.http.delete(`/api/share-links/${link.id}`).set(auth(w.tenant.token)).expect(204);
    const res = await page(pathOf(link.url));
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    const list = await h.http.get(`/api/share-links?workspace_id=${w.tenant.workspaceId}`).set(auth(w.tenant.token)).expect(200);
    expect(list.body.links.find((l: { id: string }) => l.id === link.id).state).toBe("revoked");
    const log = await h.http.get(`/api/workspaces/${w.tenant.workspaceId}/audit`).set(auth(w.tenant.token)).expect(200);
    const mine = log.body.entries.filter((e: { target: string }) => e.target === link.id).map((e: { action: string }) => e.action);
    expect(mine.sort()).toEqual(["share_link.created", "share_link.revoked"]);
  });

  it("answers the same plain 404 page for an expired, altered, unknown or other-resource token", async () => {
    const expired = await share(h, w.tenant.token, "analysis", w.analysisId, 60);
    await h.deps.db.shareLink.update({
      where: { id: expired.id },
      data: { createdAt: new Date(Date.now() - 120_000), expiresAt: new Date(Date.now() - 1) },
    });
    const live = await share(h, w.tenant.token, "entity", w.tenant.entityId);
    const token = tokenOf(live.url);
    const altered = (token[0] === "A" ? "B" : "A") + token.slice(1);
    const answers = await Promise.all(
      [
        pathOf(expired.url),
        `/share/${altered}`,
        `/share/${token}x`,
        "/share/short",
        // An entity link opens no analysis stream.
        `/share/${token}/events`,
      ].map(async (path) => {
        const res = await page(path);
        return { path, status: res.status, body: (await res.text()).replace(/\d{4}-\d\d-\d\d[^<"]*/g, "") };
      }),
    );
    for (const a of answers) expect(a.status, a.path).toBe(404);
    expect(new Set(answers.map((a) => a.body)).size).toBe(1);
    expect(answers[0]?.body).not.toMatch(/expired|revoked/i);
  });

  it("answers another method on a page or its stream 405 method_not_allowed with Allow, changing nothing", async () => {
    const link = await share(h, w.tenant.token, "entity", w.tenant.entityId);
    for (const path of [pathOf(link.url), `${pathOf(link.url)}/events`, "/share/short"]) {
      for (const method of ["POST", "PUT", "PATCH", "DELETE"]) {
        // A form post or any other body: the method is what is refused, before the body is looked at.
        const res = await fetch(`${w.baseUrl}${path}`, { method, headers: { "Content-Type": "text/plain" }, body: "x" });
        expect(res.status, `${method} ${path}`).toBe(405);
        expect(res.headers.get("allow"), `${method} ${path}`).toBe("GET, HEAD");
        expect(await res.json()).toEqual({ detail: expect.stringContaining(method), code: "method_not_allowed" });
      }
    }
    const row = await h.deps.db.shareLink.findUniqueOrThrow({ where: { id: link.id } });
    expect(row.revokedAt).toBeNull();
    expect((await page(pathOf(link.url))).status).toBe(200);
    expect((await fetch(`${w.baseUrl}${pathOf(link.url)}`, { method: "HEAD" })).status).toBe(200);
  });

  it("relays a shared analysis's event stream to its result", async () => {
    const link = await share(h, w.tenant.token, "analysis", w.analysisId);
    const res = await page(`${pathOf(link.url)}/events`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const text = await res.text();
    expect(text).toMatch(/event: progress/);
    expect(text).toMatch(/event: result/);
  });

  it("is never a credential for an API route", async () => {
    const link = await share(h, w.tenant.token, "analysis", w.analysisId);
    const token = tokenOf(link.url);
    const ids: Record<string, string> = {
      analysis_id: w.analysisId,
      entity_id: w.tenant.entityId,
      insight_id: w.insightId,
      workspace_id: w.tenant.workspaceId,
      share_link_id: link.id,
      content_id: w.contentIds[0] as string,
    };
    let checked = 0;
    for (const route of allRoutes(h.deps)) {
      if ("public" in route.auth) continue;
      const path = route.path.replace(/:(\w+)/g, (_, name: string) => ids[name] ?? "00000000-0000-4000-8000-000000000000");
      for (const headers of [{ Authorization: `Bearer ${token}` }, { "X-API-Key": token }]) {
        const res = await h.http[route.method](`${path}?workspace_id=${w.tenant.workspaceId}&entity_id=${w.tenant.entityId}`)
          .set(headers)
          .send({});
        expect(res.status, `${route.method} ${route.path} ${Object.keys(headers)[0]}`).toBe(401);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(120);
    expect((await page(pathOf(link.url))).status).toBe(200);
  }, 60_000);
});
