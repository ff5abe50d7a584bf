import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHarness, type Harness } from "../helpers/harness.js";
import { auth, createInsight, createTeam, insightBody, reviseInsight, type Team } from "./support.js";

let h: Harness;
let team: Team;

beforeAll(async () => {
  h = await createHarness();
  team = await createTeam(h);
});
afterAll(async () => {
  await h?.close();
});

interface Event {
  seq: string;
  insight_id: string;
  revision: number;
  kind: string;
  origin: string;
  actor_id: string;
}

const feed = (query: string) => h.http.get(`/agent/v1/knowledge/changes?entity_id=${team.entityId}&${query}`).set(auth(team.token));

/** Follows the feed from `after` until it has nothing more, as a client does. */
async function follow(after: string, limit: number, seen: Event[]): Promise<string> {
  let cursor = after;
  for (;;) {
    const res = await feed(`after=${cursor}&limit=${limit}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    seen.push(...res.body.events);
    expect(typeof res.body.next_after).toBe("string");
    cursor = res.body.next_after;
    if (!res.body.has_more) return cursor;
  }
}

describe("the change feed", () => {
  it("lists each committed revision once, in order, with string cursors", async () => {
    const created = await createInsight(h, team.token, insightBody(team));
    const revised = await reviseInsight(h, team.token, created.body.record.id, insightBody(team, { expected_revision: 1 }));
    const res = await feed("after=0");
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ entity_id: team.entityId, project_id: null, after: "0", has_more: false });
    const events = res.body.events as Event[];
    expect(events.map((e) => [e.seq, e.revision, e.kind])).toEqual([
      [created.body.change_seq, 1, "created"],
      [revised.body.change_seq, 2, "revised"],
    ]);
    expect(events[0]).toMatchObject({ insight_id: created.body.record.id, origin: "agent", actor_id: team.userId });
    expect(res.body.next_after).toBe(revised.body.change_seq);
    const empty = await feed(`after=${res.body.next_after}`);
    expect(empty.body).toMatchObject({ events: [], next_after: res.body.next_after, has_more: false });
    // A failed write takes no number.
    const refused = await createInsight(
      h,
      team.token,
      insightBody(team, { evidence: [{ content_id: team.content.pricing, quote: "not in the text at all" }] }),
    );
    expect(refused.status).toBe(422);
    const next = await createInsight(h, team.token, insightBody(team));
    expect(BigInt(next.body.change_seq)).toBe(BigInt(revised.body.change_seq) + 1n);
  });

  it("refuses a cursor that is not a number and a limit over 100", async () => {
    expect((await feed("after=abc")).status).toBe(422);
    expect((await feed("after=-1")).status).toBe(422);
    const res = await feed("limit=101");
    expect(res.status).toBe(422);
    expect(res.body.detail[0].loc).toEqual(["query", "limit"]);
  });

  it("a reader following next_after during concurrent writes sees every revision exactly once, with no gap", async () => {
    const cursor = await follow("0", 100, []);
    const base = BigInt(cursor);

    const seen: Event[] = [];
    let writing = true;
    const writers = Array.from({ length: 5 }, async (_, w) => {
      const receipts: string[] = [];
      const created = await createInsight(h, team.token, insightBody(team, { title: `Writer ${w}`, client_label: `writer-${w}` }));
      expect(created.status).toBe(201);
      receipts.push(created.body.change_seq);
      let revision = 1;
      for (let i = 0; i < 5; i++) {
        const res = await reviseInsight(
          h,
          team.token,
          created.body.record.id,
          insightBody(team, { expected_revision: revision, title: `Writer ${w} edit ${i}` }),
        );
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        revision = res.body.record.revision;
        receipts.push(res.body.change_seq);
      }
      return receipts;
    });
    const reader = (async () => {
      let at = cursor;
      while (writing) at = await follow(at, 3, seen);
      return follow(at, 3, seen);
    })();
    const receipts = (await Promise.all(writers)).flat();
    writing = false;
    await reader;

    const seqs = seen.map((e) => BigInt(e.seq));
    expect(seqs.length).toBe(30);
    expect(seqs).toEqual(Array.from({ length: 30 }, (_, i) => base + BigInt(i + 1)));
    expect(new Set(seen.map((e) => `${e.insight_id}:${e.revision}`)).size).toBe(30);
    expect(new Set(receipts)).toEqual(new Set(seen.map((e) => e.seq)));
    // Per record, revisions arrive in order.
    const byRecord = new Map<string, number[]>();
    for (const e of seen) byRecord.set(e.insight_id, [...(byRecord.get(e.insight_id) ?? []), e.revision]);
    for (const revisions of byRecord.values()) expect(revisions).toEqual([1, 2, 3, 4, 5, 6]);
  }, 60_000);
});
