import { randomUUID } from "node:crypto";
import { expect } from "vitest";
import type { Harness } from "../helpers/harness.js";

/** Fixtures for knowledge-record tests, made through the real API (onboarding, ingest). */
export const auth = (token: string) => ({ Authorization: `Bearer ${token}` });

export const TEXTS = {
  pricing: "Honestly the pricing page is confusing 😀 but the support team answered within minutes.",
  export: "Export to CSV broke twice this week. We need a reliable export before renewal.",
  praise: "The editor is fast and the markdown shortcuts just work.",
} as const;

export interface Team {
  token: string;
  userId: string;
  workspaceId: string;
  projectId: string;
  entityId: string;
  /** The competitor entity of the same project. */
  otherEntityId: string;
  /** Originals of the entity, by TEXTS key. */
  content: Record<keyof typeof TEXTS, string>;
  /** An original of the competitor. */
  otherContentId: string;
}

export async function userIdOf(h: Harness, token: string): Promise<string> {
  const sub = JSON.parse(Buffer.from(token.split(".")[1] ?? "", "base64url").toString("utf8")).sub as string;
  return (await h.deps.db.user.findUniqueOrThrow({ where: { sub } })).id;
}

export async function createTeam(h: Harness): Promise<Team> {
  const token = await h.token();
  const onboarding = await h.http
    .post("/api/entities/onboarding")
    .set(auth(token))
    .send({ request_id: randomUUID(), company: { name: "Acme" }, competitors: [{ name: "Globex" }] });
  expect(onboarding.status, JSON.stringify(onboarding.body)).toBe(201);
  const entityId = onboarding.body.company.id as string;
  const otherEntityId = onboarding.body.competitors[0].id as string;
  const keys = Object.keys(TEXTS) as (keyof typeof TEXTS)[];
  const ingest = await h.http
    .post("/agent/v1/ingest/content")
    .set(auth(token))
    .send({
      entity_id: entityId,
      sources: keys.map((k) => ({ id: `${k}-${randomUUID()}`, platform: "reddit", content: TEXTS[k], author: `author-${k}` })),
    });
  expect(ingest.status, JSON.stringify(ingest.body)).toBe(200);
  const other = await h.http
    .post("/agent/v1/ingest/content")
    .set(auth(token))
    .send({ entity_id: otherEntityId, sources: [{ platform: "hackernews", content: "Globex onboarding is smooth and quick." }] });
  expect(other.status).toBe(200);
  const content = Object.fromEntries(keys.map((k, i) => [k, ingest.body.content_ids[i] as string])) as Team["content"];
  return {
    token,
    userId: await userIdOf(h, token),
    workspaceId: onboarding.body.workspace_id,
    projectId: onboarding.body.project_id,
    entityId,
    otherEntityId,
    content,
    otherContentId: other.body.content_ids[0],
  };
}

/** A new user made a member of the team's workspace with `role`. */
export async function addMember(h: Harness, team: Team, role: string): Promise<{ token: string; userId: string }> {
  const token = await h.token();
  expect((await h.http.get("/agent/v1/connection").set(auth(token))).status).toBe(200);
  const userId = await userIdOf(h, token);
  await h.deps.db.workspaceMember.create({ data: { workspaceId: team.workspaceId, userId, role } });
  return { token, userId };
}

export interface Evidence {
  content_id?: string;
  source_revision_id?: string;
  quote: string;
  relation?: string;
  start?: number;
}

export function insightBody(team: Team, overrides: Record<string, unknown> = {}) {
  return {
    entity_id: team.entityId,
    request_id: randomUUID(),
    expected_revision: 0,
    title: "Pricing page confuses buyers",
    summary: "Buyers find the pricing page confusing, though support answers quickly.",
    reasoning: "One direct statement; support speed is a separate, positive signal.",
    limitations: ["A single post."],
    tags: ["pricing"],
    client_label: "test-agent",
    evidence: [{ content_id: team.content.pricing, quote: "the pricing page is confusing", relation: "supports" }] as Evidence[],
    ...overrides,
  };
}

export const createInsight = (h: Harness, token: string, body: object) =>
  h.http.post("/agent/v1/knowledge/insights").set(auth(token)).send(body);

export const reviseInsight = (h: Harness, token: string, id: string, body: object) =>
  h.http.put(`/agent/v1/knowledge/insights/${id}`).set(auth(token)).send(body);

export async function knowledgeCounts(h: Harness) {
  const db = h.deps.db;
  const [insights, revisions, sources, changes, requests] = await Promise.all([
    db.knowledgeInsight.count(),
    db.knowledgeInsightRevision.count(),
    db.knowledgeSourceRevision.count(),
    db.knowledgeChange.count(),
    db.knowledgeWriteRequest.count(),
  ]);
  return { insights, revisions, sources, changes, requests };
}
