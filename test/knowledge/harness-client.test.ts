import { randomUUID } from "node:crypto";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHarness, type Harness } from "../helpers/harness.js";
import { createTeam, TEXTS, type Team } from "./support.js";

/**
 * The agent client (`@crowdlisten/harness` 2.2.3, unchanged) against this service over real
 * HTTP: `ingest` with destination "insight" (create, revise, replay, conflicts) and `recall`
 * modes knowledge, knowledge_source, knowledge_changes and knowledge_context, in an entity and
 * a project scope. The client reads its base URL once, when its module loads.
 */
type HandleV2Tool = (sb: unknown, userId: string, name: string, args: Record<string, unknown>, accessToken: string) => Promise<string>;

let h: Harness;
let server: Server;
let handleV2Tool: HandleV2Tool;
let team: Team;

beforeAll(async () => {
  h = await createHarness();
  server = h.app.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  process.env.CROWDLISTEN_AGENT_URL = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  ({ handleV2Tool } = (await import("@crowdlisten/harness/dist/harness-v2.js")) as unknown as { handleV2Tool: HandleV2Tool });
  team = await createTeam(h);
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await h.close();
});

const call = async (name: "ingest" | "recall", args: Record<string, unknown>) =>
  JSON.parse(await handleV2Tool(null, team.userId, name, args, team.token));

/** The client throws an Error whose message is its JSON error report. */
async function callError(name: "ingest" | "recall", args: Record<string, unknown>) {
  const error = await handleV2Tool(null, team.userId, name, args, team.token).then(
    () => {
      throw new Error("the call succeeded");
    },
    (err: Error) => err,
  );
  return JSON.parse(error.message) as { error: string; status: number; details?: unknown; suggestion?: string };
}

describe("the agent client's knowledge calls", () => {
  it("saves, reads, revises and replays an insight, and sees stale and reused requests refused", async () => {
    const args = {
      destination: "insight",
      entity_id: team.entityId,
      request_id: randomUUID(),
      expected_revision: 0,
      title: "Investigate pricing page clarity",
      summary: "A buyer reports the pricing page is confusing.",
      reasoning: "Supports a clarity hypothesis; says nothing about price level.",
      limitations: ["One post."],
      tags: ["pricing"],
      client_label: "cursor",
      evidence: [{ content_id: team.content.pricing, quote: "the pricing page is confusing", relation: "supports" }],
    };
    const receipt = await call("ingest", args);
    expect(receipt).toMatchObject({
      saved: true,
      replayed: false,
      change_seq: expect.any(String),
      record: { revision: 1, origin: "agent", actor_id: team.userId, client_label: "cursor", review_state: "unreviewed" },
    });
    const id = receipt.record.id as string;

    const listed = await call("recall", { mode: "knowledge", entity_id: team.entityId, tag: "pricing", query: "pricing page" });
    expect(listed.insights.map((r: { id: string }) => r.id)).toEqual([id]);

    const read = await call("recall", { mode: "knowledge", entity_id: team.entityId, insight_id: id });
    expect(read.record).toEqual(receipt.record);
    expect(read.resolved_evidence[0]).toMatchObject({ quote: "the pricing page is confusing", available: true });
    expect(read.sources[0]).toMatchObject({ content_id: team.content.pricing, available: true });
    expect(read.unavailable_source_ids).toEqual([]);
    const sourceRevisionId = read.record.evidence[0].source_revision_id as string;

    // Revise with the revision just read, reusing the captured snapshot.
    const revision = {
      ...args,
      insight_id: id,
      request_id: randomUUID(),
      expected_revision: 1,
      summary: "Buyers report the pricing page is confusing; support answers quickly.",
      evidence: [
        { source_revision_id: sourceRevisionId, content_id: team.content.pricing, quote: "the pricing page is confusing" },
        { content_id: team.content.pricing, quote: "the support team answered within minutes", relation: "context" },
      ],
    };
    const revised = await call("ingest", revision);
    expect(revised.record).toMatchObject({ id, revision: 2 });
    expect(revised.record.evidence[0].source_revision_id).toBe(sourceRevisionId);

    // A lost answer: the same payload and request id return the original receipt.
    const replay = await call("ingest", revision);
    expect(replay).toEqual({ ...revised, replayed: true });

    // Another agent still at revision 1.
    const stale = await callError("ingest", { ...revision, request_id: randomUUID(), title: "Another agent's edit" });
    expect(stale.status).toBe(409);
    expect(stale.error).toContain("revision 2");
    expect(stale.details).toContain("revision 2");
    expect(stale.suggestion).toContain("revision_conflict");

    // The same request id with changed input.
    const reused = await callError("ingest", { ...revision, title: "Changed" });
    expect(reused.status).toBe(409);
    expect(reused.error).toContain("request_id");

    // A quote that is not verbatim is refused naming the citation.
    const invented = await callError("ingest", {
      ...args,
      request_id: randomUUID(),
      evidence: [{ content_id: team.content.pricing, quote: "the pricing page is perfect" }],
    });
    expect(invented.status).toBe(422);
    expect(invented.details).toEqual([expect.objectContaining({ loc: ["body", "evidence", 0, "quote"], type: "quote_not_verbatim" })]);

    const first = await call("recall", { mode: "knowledge", entity_id: team.entityId, insight_id: id, revision: 1 });
    expect(first.record).toEqual(receipt.record);
    const compact = await call("recall", { mode: "knowledge", entity_id: team.entityId, insight_id: id, include_evidence: false });
    expect(compact.sources).toBeUndefined();
    expect(compact.record.revision).toBe(2);
  });

  it("lists and reads originals and snapshots, follows the change feed and reads bounded context", async () => {
    const sources = await call("recall", { mode: "knowledge_source", entity_id: team.entityId, limit: 2 });
    expect(sources).toMatchObject({ count: 2, next_offset: 2 });
    const rest = await call("recall", { mode: "knowledge_source", entity_id: team.entityId, offset: sources.next_offset });
    expect(rest.next_offset).toBeNull();
    const original = await call("recall", { mode: "knowledge_source", entity_id: team.entityId, content_id: team.content.export });
    expect(original).toMatchObject({ content_id: team.content.export, text: TEXTS.export, text_kind: "original" });

    const saved = await call("ingest", {
      destination: "insight",
      entity_id: team.entityId,
      request_id: randomUUID(),
      expected_revision: 0,
      title: "Exports break",
      summary: "CSV export failed repeatedly.",
      evidence: [{ content_id: team.content.export, quote: "Export to CSV broke twice this week" }],
    });
    const snapshot = await call("recall", {
      mode: "knowledge_source",
      entity_id: team.entityId,
      source_revision_id: saved.record.evidence[0].source_revision_id,
    });
    expect(snapshot).toMatchObject({ content_id: team.content.export, available: true, text: TEXTS.export });

    let after = "0";
    const events: { seq: string; insight_id: string }[] = [];
    for (;;) {
      const page = await call("recall", { mode: "knowledge_changes", entity_id: team.entityId, after, limit: 1 });
      events.push(...page.events);
      after = page.next_after;
      expect(typeof after).toBe("string");
      if (!page.has_more) break;
    }
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => String(i + 1)));
    expect(events.at(-1)?.insight_id).toBe(saved.record.id);

    const context = await call("recall", { mode: "knowledge_context", entity_id: team.entityId, max_chars: 500, limit: 20 });
    expect(Array.from(context.markdown as string).length).toBeLessThanOrEqual(500);
    expect(context.bounds.max_chars).toBe(500);
    expect(context.records.length).toBeGreaterThan(0);
  });

  it("works in a project scope, and the client itself asks for exactly one scope", async () => {
    const saved = await call("ingest", {
      destination: "insight",
      project_id: team.projectId,
      request_id: randomUUID(),
      expected_revision: 0,
      title: "Onboarding compared",
      summary: "Globex onboarding is described as smooth.",
      evidence: [{ content_id: team.otherContentId, quote: "Globex onboarding is smooth", relation: "contradicts" }],
    });
    expect(saved.record).toMatchObject({ project_id: team.projectId, entity_id: null });
    const listed = await call("recall", { mode: "knowledge", project_id: team.projectId });
    expect(listed.insights.map((r: { id: string }) => r.id)).toEqual([saved.record.id]);
    const feed = await call("recall", { mode: "knowledge_changes", project_id: team.projectId });
    expect(feed.events).toHaveLength(1);
    const both = await call("recall", { mode: "knowledge", entity_id: team.entityId, project_id: team.projectId });
    expect(both.error).toContain("Exactly one");
  });
});
