import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, countRows, createEntityFor } from "../helpers/evidence.js";
import { createHarness, type Harness } from "../helpers/harness.js";

/** Every bound of the spec's Limits table for content ingest: just inside passes, just outside is a 422 at the field. */
let h: Harness;
let token: string;
let entityId: string;
beforeAll(async () => {
  h = await createHarness();
  token = await h.token();
  entityId = (await createEntityFor(h, token)).id;
});
afterAll(() => h.close());

type Body = {
  entity_id: string;
  sources: Record<string, unknown>[];
  [k: string]: unknown;
};

let counter = 0;
function body(): Body {
  counter += 1;
  return {
    entity_id: entityId,
    sources: [{ platform: "web", content: `limits source ${counter}`, comments: [{ text: `limits comment ${counter}` }] }],
  };
}
const src = (b: Body) => b.sources[0] as Record<string, unknown>;
const cmt = (b: Body) => (src(b).comments as Record<string, unknown>[])[0] as Record<string, unknown>;
const x = (n: number) => "x".repeat(n);

const post = (b: Body) => h.http.post("/agent/v1/ingest/content").set(bearer(token)).send(b);

interface Bound {
  name: string;
  loc: (string | number)[];
  inside: (b: Body) => void;
  outside: (b: Body) => void;
}

/** A mutation that sets `key` on the part of the body `target` picks. */
const on =
  (target: (b: Body) => Record<string, unknown>, key: string, value: () => unknown) =>
  (b: Body): void => {
    target(b)[key] = value();
  };
const top = (b: Body) => b as Record<string, unknown>;

const S = ["body", "sources", 0];
const C = [...S, "comments", 0];

const bounds: Bound[] = [
  {
    name: "sources at most 500",
    loc: ["body", "sources"],
    inside: (b) => {
      b.sources = Array.from({ length: 500 }, (_, i) => ({ platform: "web", content: `many ${counter} ${i}` }));
    },
    outside: (b) => {
      b.sources = Array.from({ length: 501 }, (_, i) => ({ platform: "web", content: `many ${i}` }));
    },
  },
  {
    name: "sources at least 1",
    loc: ["body", "sources"],
    inside: () => {},
    outside: (b) => {
      b.sources = [];
    },
  },
  {
    name: "collection_run_id max 200",
    loc: ["body", "collection_run_id"],
    inside: on(top, "collection_run_id", () => x(200)),
    outside: on(top, "collection_run_id", () => x(201)),
  },
  {
    name: "collection_scope max 200",
    loc: ["body", "collection_scope"],
    inside: on(top, "collection_scope", () => x(200)),
    outside: on(top, "collection_scope", () => x(201)),
  },
  {
    name: "coverage_state is a coverage state",
    loc: ["body", "coverage_state"],
    inside: on(top, "coverage_state", () => "exhaustive"),
    outside: on(top, "coverage_state", () => "complete"),
  },
  {
    name: "source id max 500",
    loc: [...S, "id"],
    inside: on(src, "id", () => `${counter}${x(500 - String(counter).length)}`),
    outside: on(src, "id", () => x(501)),
  },
  {
    name: "source title max 2000",
    loc: [...S, "title"],
    inside: on(src, "title", () => x(2000)),
    outside: on(src, "title", () => x(2001)),
  },
  {
    name: "source url max 5000",
    loc: [...S, "url"],
    inside: on(src, "url", () => `https://e.com/${counter}/${x(5000 - 15 - String(counter).length)}`),
    outside: on(src, "url", () => `https://e.com/${x(5001 - 14)}`),
  },
  {
    name: "source content at most 500000",
    loc: [...S, "content"],
    inside: on(src, "content", () => `${counter}${x(499_999 - String(counter).length)}`),
    outside: on(src, "content", () => x(500_001)),
  },
  {
    name: "source content at least 1",
    loc: [...S, "content"],
    inside: on(src, "content", () => `${counter % 10}`),
    outside: on(src, "content", () => ""),
  },
  {
    name: "source author max 500",
    loc: [...S, "author"],
    inside: on(src, "author", () => x(500)),
    outside: on(src, "author", () => x(501)),
  },
  {
    name: "source platform is a platform",
    loc: [...S, "platform"],
    inside: on(src, "platform", () => "codex"),
    outside: on(src, "platform", () => "myspace"),
  },
  {
    name: "source published_at is a datetime",
    loc: [...S, "published_at"],
    inside: on(src, "published_at", () => "2026-01-02T03:04:05+02:00"),
    outside: on(src, "published_at", () => "yesterday"),
  },
  { name: "comment id max 500", loc: [...C, "id"], inside: on(cmt, "id", () => x(500)), outside: on(cmt, "id", () => x(501)) },
  {
    name: "comment url max 5000",
    loc: [...C, "url"],
    inside: on(cmt, "url", () => `https://e.com/${x(5000 - 14)}`),
    outside: on(cmt, "url", () => `https://e.com/${x(5001 - 14)}`),
  },
  {
    name: "comment text at most 50000",
    loc: [...C, "text"],
    inside: on(cmt, "text", () => x(50_000)),
    outside: on(cmt, "text", () => x(50_001)),
  },
  {
    name: "comment text at least 1",
    loc: [...C, "text"],
    inside: on(cmt, "text", () => "y"),
    outside: on(cmt, "text", () => ""),
  },
  {
    name: "comment author max 500",
    loc: [...C, "author"],
    inside: on(cmt, "author", () => x(500)),
    outside: on(cmt, "author", () => x(501)),
  },
  { name: "comment likes >= 0", loc: [...C, "likes"], inside: on(cmt, "likes", () => 0), outside: on(cmt, "likes", () => -1) },
  {
    name: "comment replies >= 0",
    loc: [...C, "replies"],
    inside: on(cmt, "replies", () => 0),
    outside: on(cmt, "replies", () => -1),
  },
  {
    name: "comment likes is an integer",
    loc: [...C, "likes"],
    inside: on(cmt, "likes", () => 7),
    outside: on(cmt, "likes", () => 1.5),
  },
  ...(["likes", "comments", "views", "score", "shares"] as const).map(
    (field): Bound => ({
      name: `engagement ${field} >= 0`,
      loc: [...S, "engagement", field],
      inside: on(src, "engagement", () => ({ [field]: 0 })),
      outside: on(src, "engagement", () => ({ [field]: -1 })),
    }),
  ),
];

describe("ingest limits", () => {
  it.each(bounds)("$name", async ({ loc, inside, outside }) => {
    const ok = body();
    inside(ok);
    const accepted = await post(ok);
    expect(accepted.status, JSON.stringify(accepted.body).slice(0, 300)).toBe(200);
    expect(accepted.body.inserted).toBeGreaterThan(0);

    const before = await countRows(h, entityId);
    const bad = body();
    outside(bad);
    const refused = await post(bad);
    expect(refused.status).toBe(422);
    expect(refused.body.detail).toHaveLength(1);
    expect(refused.body.detail[0].loc).toEqual(loc);
    expect(await countRows(h, entityId)).toEqual(before);
  });

  it("entity_id is 1 to 100 characters: inside passes validation (then 404 for a non-entity), outside is a 422", async () => {
    for (const id of ["e", x(100)]) {
      const res = await post({ ...body(), entity_id: id });
      expect(res.status).toBe(404);
    }
    for (const id of ["", x(101)]) {
      const res = await post({ ...body(), entity_id: id });
      expect(res.status).toBe(422);
      expect(res.body.detail).toEqual([expect.objectContaining({ loc: ["body", "entity_id"] })]);
    }
    const missing = await post({ sources: body().sources } as Body);
    expect(missing.status).toBe(422);
    expect(missing.body.detail).toEqual([{ loc: ["body", "entity_id"], msg: "Field required", type: "missing" }]);
  });
});
