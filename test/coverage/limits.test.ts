import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, createEntityFor } from "../helpers/evidence.js";
import { createHarness, type Harness } from "../helpers/harness.js";

/** Every bound of the coverage operation: just inside passes, just outside is a 422 at the field. */
let h: Harness;
let token: string;
let entityId: string;
beforeAll(async () => {
  h = await createHarness();
  token = await h.token();
  entityId = (await createEntityFor(h, token)).id;
});
afterAll(() => h.close());

const post = (body: Record<string, unknown>) => h.http.post("/agent/v1/ingest/coverage").set(bearer(token)).send(body);
const x = (n: number) => "x".repeat(n);
/** A valid ISO 8601 datetime of exactly `n` characters (fractional seconds pad it). */
const datetime = (n: number) => `2026-01-02T03:04:05.${"1".repeat(n - 21)}Z`;
const targets = (n: number) => Array.from({ length: n }, (_, i) => ({ target: `account-${i}` }));

interface Bound {
  field: string;
  loc: (string | number)[];
  inside: unknown;
  outside: unknown;
}

const bounds: Bound[] = [
  { field: "targets", loc: ["body", "targets"], inside: targets(200), outside: targets(201) },
  { field: "notes", loc: ["body", "notes"], inside: x(5000), outside: x(5001) },
  { field: "query", loc: ["body", "query"], inside: x(5000), outside: x(5001) },
  { field: "collection_scope", loc: ["body", "collection_scope"], inside: x(200), outside: x(201) },
  { field: "run_id", loc: ["body", "run_id"], inside: x(200), outside: x(201) },
  { field: "started_at", loc: ["body", "started_at"], inside: datetime(200), outside: datetime(201) },
  { field: "finished_at", loc: ["body", "finished_at"], inside: datetime(200), outside: datetime(201) },
  { field: "coverage_state", loc: ["body", "coverage_state"], inside: "blocked", outside: "Exhaustive" },
  { field: "collector", loc: ["body", "collector"], inside: "meetingnotes", outside: "myspace" },
  {
    field: "targets",
    loc: ["body", "targets", 0, "items_found"],
    inside: [{ target: "a", items_found: 0 }],
    outside: [{ target: "a", items_found: -1 }],
  },
  {
    field: "targets",
    loc: ["body", "targets", 0, "items_stored"],
    inside: [{ target: "a", items_stored: 0 }],
    outside: [{ target: "a", items_stored: -1 }],
  },
  { field: "started_at", loc: ["body", "started_at"], inside: "2026-01-02T03:04:05+02:00", outside: "last tuesday" },
];

describe("coverage limits", () => {
  it.each(bounds)("$field ($loc)", async ({ field, loc, inside, outside }) => {
    const ok = await post({ entity_id: entityId, coverage_state: "sampled", [field]: inside });
    expect(ok.status, JSON.stringify(ok.body).slice(0, 300)).toBe(200);
    if (field === "targets") expect(ok.body.targets_recorded).toBe((inside as unknown[]).length);

    const before = await h.deps.db.coverageRecord.count();
    const bad = await post({ entity_id: entityId, coverage_state: "sampled", [field]: outside });
    expect(bad.status).toBe(422);
    expect(bad.body.detail).toHaveLength(1);
    expect(bad.body.detail[0].loc).toEqual(loc);
    expect(await h.deps.db.coverageRecord.count()).toBe(before);
  });

  it("entity_id is 1 to 100 characters and coverage_state is required", async () => {
    expect((await post({ entity_id: x(100), coverage_state: "sampled" })).status).toBe(404);
    expect((await post({ entity_id: "e", coverage_state: "sampled" })).status).toBe(404);
    for (const id of ["", x(101)]) {
      const res = await post({ entity_id: id, coverage_state: "sampled" });
      expect(res.status).toBe(422);
      expect(res.body.detail).toEqual([expect.objectContaining({ loc: ["body", "entity_id"] })]);
    }
    const missing = await post({ entity_id: entityId });
    expect(missing.status).toBe(422);
    expect(missing.body.detail).toEqual([{ loc: ["body", "coverage_state"], msg: "Field required", type: "missing" }]);
  });
});
