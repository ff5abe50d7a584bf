import { randomUUID } from "node:crypto";
import { expect } from "vitest";
import { runAdminCommand } from "../../src/governance/admin/commands.js";
import { createBulkEmbedder } from "../../src/insights/embed/provider.js";
import { enrichContent } from "../../src/insights/enrichment/service.js";
import { Prisma } from "../../src/platform/db.js";
import type { Harness } from "../helpers/harness.js";

/**
 * Fixtures for the deletion tests, and the proof they rest on: `tablesContaining` reads the
 * database's own catalogue (information_schema) and searches every text, varchar, json, jsonb,
 * tsvector and text-array column of every table in the public schema, so a table added later
 * is searched too, without anyone remembering to list it.
 */
export const auth = (token: string) => ({ Authorization: `Bearer ${token}` });

export async function tablesContaining(h: Harness, needle: string): Promise<string[]> {
  const columns = await h.deps.db.$queryRaw<{ table_name: string; column_name: string }[]>`
    SELECT c.table_name, c.column_name
    FROM information_schema.columns c
    JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
    WHERE c.table_schema = 'public' AND t.table_type = 'BASE TABLE'
      AND (c.data_type IN ('text', 'character varying', 'character', 'json', 'jsonb', 'tsvector')
        OR (c.data_type = 'ARRAY' AND c.udt_name IN ('_text', '_varchar')))
    ORDER BY 1, 2`;
  expect(columns.length).toBeGreaterThan(100);
  const found: string[] = [];
  for (const { table_name: table, column_name: column } of columns) {
    const ident = (name: string) => Prisma.raw(`"${name.replaceAll('"', '""')}"`);
    const rows = await h.deps.db.$queryRaw<{ n: number }[]>`
      SELECT count(*)::int AS n FROM ${ident(table)} WHERE ${ident(column)}::text ILIKE ${`%${needle}%`}`;
    if ((rows[0]?.n ?? 0) > 0) found.push(`${table}.${column}`);
  }
  return found;
}

export interface Team {
  token: string;
  sub: string;
  userId: string;
  workspaceId: string;
  entityId: string;
}

/** A user who owns a workspace (onboarding) with one company entity, raw export enabled. */
export async function createTeam(h: Harness, name = "Acme"): Promise<Team> {
  const sub = `owner-${randomUUID()}`;
  const token = await h.token(sub);
  const onboarding = await h.http.post("/api/entities/onboarding").set(auth(token)).send({ request_id: randomUUID(), company: { name } });
  expect(onboarding.status, JSON.stringify(onboarding.body)).toBe(201);
  await runAdminCommand(h.deps, ["enable-raw-export", sub]);
  const userId = (await h.deps.db.user.findUniqueOrThrow({ where: { sub } })).id;
  return { token, sub, userId, workspaceId: onboarding.body.workspace_id, entityId: onboarding.body.company.id };
}

/** A new user made a member of the team's workspace with `role`. */
export async function addMember(h: Harness, team: Team, role: string): Promise<{ token: string; userId: string }> {
  const token = await h.token(`member-${randomUUID()}`);
  expect((await h.http.get("/agent/v1/connection").set(auth(token))).status).toBe(200);
  const sub = JSON.parse(Buffer.from(token.split(".")[1] ?? "", "base64url").toString("utf8")).sub as string;
  const userId = (await h.deps.db.user.findUniqueOrThrow({ where: { sub } })).id;
  const res = await h.http.post(`/api/workspaces/${team.workspaceId}/members`).set(auth(team.token)).send({ user_id: userId, role });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return { token, userId };
}

export async function ingest(h: Harness, token: string, entityId: string, sources: Record<string, unknown>[]) {
  const res = await h.http.post("/agent/v1/ingest/content").set(auth(token)).send({ entity_id: entityId, sources });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as {
    content_ids: string[];
    parent_content_ids: string[];
    comment_content_ids: string[];
    skipped_erased: number;
    stored: number;
    total_received: number;
    inserted: number;
    skipped_dedup: number;
  };
}

/** Embeds the rows and splits them into opinion units, as the enrichment worker does. */
export async function enrich(h: Harness, ids: string[]) {
  await enrichContent(h.deps.pool, createBulkEmbedder(h.config), ids);
}

/** Every exportable table's rows of the caller, as one text (an `export` key of the owner). */
export async function exportText(h: Harness, token: string): Promise<string> {
  const key = await h.http
    .post("/api/user/keys")
    .set(auth(token))
    .send({ name: "export", scopes: ["export"] });
  expect(key.status).toBe(201);
  const texts: string[] = [];
  for (const table of ["entities", "content_store", "opinion_units", "entity_insights", "insight_evidence", "pages", "knowledge"]) {
    const res = await h.http.get(`/agent/v1/export/table/${table}?limit=5000`).set("X-API-Key", key.body.raw_key);
    expect(res.status, `${table}: ${JSON.stringify(res.body).slice(0, 200)}`).toBe(200);
    texts.push(JSON.stringify(res.body.rows));
  }
  return texts.join("\n");
}

export async function search(h: Harness, token: string, query: string) {
  const res = await h.http.post("/agent/v1/search").set(auth(token)).send({ query, limit: 50 });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as { results: { content_id: string | null; snippet: string; title: string }[] };
}
