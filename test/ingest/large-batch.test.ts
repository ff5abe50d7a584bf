import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IngestRequestSchema } from "../../src/intake/ingest/schemas.js";
import { type IngestDeps, ingestContent } from "../../src/intake/ingest/service.js";
import type { Db } from "../../src/platform/db.js";
import { bearer, countRows, createEntityFor } from "../helpers/evidence.js";
import { createHarness, type Harness } from "../helpers/harness.js";

/** A full batch (500 sources, 5 comments each, large contents) is a handful of set-based statements. */
let h: Harness;
let token: string;
beforeAll(async () => {
  h = await createHarness();
  token = await h.token();
});
afterAll(() => h.close());

const paragraph = (seed: number, length: number) => {
  const words = ["pricing", "onboarding", "latency", "export", "support", "invoice", "dashboard", "search", "webhook", "mobile"];
  let out = "";
  for (let i = 0; out.length < length; i++) out += `${words[(seed * 7 + i * 3) % words.length]}${i % 11 === 10 ? ". " : " "}`;
  return out.slice(0, length);
};

function largeBatch(tag: string) {
  return {
    sources: Array.from({ length: 500 }, (_, i) => ({
      id: `${tag}-${i}`,
      platform: "reddit",
      title: `Thread ${i}`,
      url: `https://example.com/${tag}/${i}`,
      content: `${paragraph(i, 10_000)} ${tag}-${i}`,
      comments: Array.from({ length: 5 }, (_, j) => ({ id: `${tag}-${i}-${j}`, text: `${paragraph(i + j, 600)} ${tag}-${i}-${j}` })),
    })),
  };
}

/** Counts the statements a transaction runs, on the real client. */
function countingDb(db: Db, counter: { statements: number }): Db {
  const countTx = (tx: object) =>
    new Proxy(tx, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver);
        if (prop === "$queryRaw" || prop === "$executeRaw" || prop === "$queryRawUnsafe") {
          return (...args: unknown[]) => {
            counter.statements += 1;
            return (value as (...a: unknown[]) => unknown).apply(target, args);
          };
        }
        return value;
      },
    });
  return new Proxy(db, {
    get(target, prop, receiver) {
      if (prop === "$transaction") {
        return (fn: (tx: object) => Promise<unknown>, options?: object) => target.$transaction((tx) => fn(countTx(tx)), options);
      }
      return Reflect.get(target, prop, receiver);
    },
  });
}

/** Counts the statements run on the pool's connections, besides the transaction's own (BEGIN with its settings, COMMIT, ROLLBACK). */
function countingPool(pool: pg.Pool, counter: { statements: number }): pg.Pool {
  return new Proxy(pool, {
    get(target, prop, receiver) {
      if (prop !== "connect") return Reflect.get(target, prop, receiver);
      return async () => {
        const client = await target.connect();
        return new Proxy(client, {
          get(c, key, r) {
            const value = Reflect.get(c, key, r);
            if (key !== "query") return typeof value === "function" ? value.bind(c) : value;
            return (...args: unknown[]) => {
              const text = typeof args[0] === "string" ? args[0] : "";
              if (!/^(BEGIN|COMMIT|ROLLBACK)\b/.test(text)) counter.statements += 1;
              return (value as (...a: unknown[]) => unknown).apply(c, args);
            };
          },
        });
      };
    },
  });
}

describe("a full batch with large contents", () => {
  it("stores 500 sources and 2500 comments through HTTP in one request", async () => {
    const entity = await createEntityFor(h, token);
    const body = { entity_id: entity.id, ...largeBatch("http") };
    expect(Buffer.byteLength(JSON.stringify(body))).toBeGreaterThan(6_000_000);
    const res = await h.http.post("/agent/v1/ingest/content").set(bearer(token)).send(body);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ inserted: 3000, skipped_dedup: 0, total_received: 3000, comments_inserted: 2500 });
    expect(await countRows(h, entity.id)).toEqual({ sources: 500, comments: 2500 });
  });

  /** Ingests a large batch into a new entity, then the same batch again, counting the statements of each. */
  async function ingestTwice(tag: string, deps: IngestDeps, counter: { statements: number }) {
    const entity = await createEntityFor(h, token);
    const request = IngestRequestSchema.parse(largeBatch(tag));
    const first = await ingestContent(deps, { id: entity.id, workspaceId: entity.workspace_id }, request);
    const firstStatements = counter.statements;
    counter.statements = 0;
    const again = await ingestContent(deps, { id: entity.id, workspaceId: entity.workspace_id }, request);
    expect(first).toMatchObject({ inserted: 3000, comments_inserted: 2500 });
    expect(await countRows(h, entity.id)).toEqual({ sources: 500, comments: 2500 });
    expect(again).toMatchObject({ inserted: 0, skipped_dedup: 3000 });
    expect(again.content_ids).toEqual(first.content_ids);
    return { first: firstStatements, again: counter.statements };
  }

  it("copies new rows in three statements and reads a fully reused batch in two, whatever its size", async () => {
    const counter = { statements: 0 };
    const prisma = { statements: 0 };
    const deps = { ...h.deps, db: countingDb(h.deps.db, prisma), pool: countingPool(h.deps.pool, counter) };
    // Besides BEGIN and COMMIT: the author erasures, the keys already stored, one COPY of sources and
    // comments; for the reused batch the erasures and the stored keys, nothing copied.
    expect(await ingestTwice("copy", deps, counter)).toEqual({ first: 3, again: 2 });
    expect(prisma.statements).toBe(0);
  });

  it("uses three statements for new rows and five for a fully reused batch through Prisma, whatever its size", async () => {
    const counter = { statements: 0 };
    // Without the driver's pool the batch is written row by row (as the notes import writes it).
    const deps = { ...h.deps, db: countingDb(h.deps.db, counter), pool: undefined };
    // The workspace's author erasures (src/intake/ingest/erased-authors.ts) and two inserts (sources,
    // comments), no lookup of ids when every row is new; for the reused batch the erasures, two inserts
    // that conflict and two lookups of the existing ids.
    expect(await ingestTwice("svc", deps, counter)).toEqual({ first: 3, again: 5 });
  });
});
