import { randomUUID } from "node:crypto";
import { Writable } from "node:stream";
import supertest from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../src/app.js";
import type { AppDeps } from "../../src/platform/deps.js";
import { createLogger } from "../../src/platform/logger.js";
import { createSecretBoxFromKey, deriveSecretsKey, secretBoxFor } from "../../src/platform/secrets.js";
import { notesSyncProcessor } from "../../workers/notes-sync.js";
import { startWorkers, type WorkerHandles } from "../../workers/runtime.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { FakeNotesProvider, makeNote } from "./fake-provider.js";
import { userWithEntity } from "./helpers.js";

// A key that is easy to find anywhere it might leak, in clear or in common encodings.
const API_KEY = `grn_LEAKCANARY${randomUUID().replaceAll("-", "")}`;
const NEEDLES = [API_KEY, Buffer.from(API_KEY).toString("base64"), Buffer.from(API_KEY).toString("hex"), encodeURIComponent(API_KEY)];

let provider: FakeNotesProvider;
let h: Harness;
let deps: AppDeps;
let http: ReturnType<typeof supertest>;
let workers: WorkerHandles;
const logLines: string[] = [];

beforeAll(async () => {
  provider = new FakeNotesProvider(API_KEY);
  h = await createHarness({ MEETINGNOTES_API_URL: await provider.start() });
  provider.notes.push(makeNote(1), makeNote(2));
  // The real app and workers, logging everything (trace) into memory.
  const sink = new Writable({
    write(chunk, _enc, done) {
      logLines.push(String(chunk));
      done();
    },
  });
  deps = { ...h.deps, logger: createLogger("trace", "leak-test", sink) };
  http = supertest(createApp(deps));
  workers = startWorkers(deps, { "notes.sync.v1": notesSyncProcessor }, { concurrency: 2 });
});
afterAll(async () => {
  await workers.close();
  await h.close();
  await provider.close();
});

async function redisValues(): Promise<{ key: string; text: string }[]> {
  const redis = h.deps.redis;
  const out: { key: string; text: string }[] = [];
  let cursor = "0";
  do {
    const [next, keys] = await redis.scan(cursor, "MATCH", `${h.config.REDIS_PREFIX}:*`, "COUNT", 500);
    cursor = next;
    for (const key of keys) {
      const type = await redis.type(key);
      let value: unknown;
      if (type === "string") value = await redis.get(key);
      else if (type === "hash") value = await redis.hgetall(key);
      else if (type === "list") value = await redis.lrange(key, 0, -1);
      else if (type === "set") value = await redis.smembers(key);
      else if (type === "zset") value = await redis.zrange(key, "0", "-1", "WITHSCORES");
      else if (type === "stream") value = await redis.xrange(key, "-", "+");
      else value = `unhandled type ${type}`;
      out.push({ key, text: `${key} ${JSON.stringify(value)}` });
    }
  } while (cursor !== "0");
  return out;
}

async function postgresHits(): Promise<string[]> {
  const columns = await h.deps.db.$queryRaw<{ table_name: string; column_name: string }[]>`
    SELECT c.table_name, c.column_name FROM information_schema.columns c
    JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
    WHERE c.table_schema = 'public' AND t.table_type = 'BASE TABLE'
      AND c.data_type IN ('text', 'character varying', 'character', 'json', 'jsonb', 'ARRAY', 'USER-DEFINED', 'bytea')`;
  expect(columns.length).toBeGreaterThan(20);
  const hits: string[] = [];
  for (const { table_name, column_name } of columns) {
    for (const needle of NEEDLES) {
      const rows = await h.deps.db.$queryRawUnsafe<{ n: bigint }[]>(
        `SELECT count(*)::bigint AS n FROM "${table_name}" WHERE strpos("${column_name}"::text, $1) > 0`,
        needle,
      );
      if (Number(rows[0]?.n) > 0) hits.push(`${table_name}.${column_name}`);
    }
  }
  return hits;
}

describe("the provider api_key is never kept in clear", () => {
  it("after successful and failed syncs, no clear api_key is in Redis, Postgres or the logs", async () => {
    const { token, entityId } = await userWithEntity(h);
    const ok = await http
      .post("/api/meetingnotes/sync")
      .set("Authorization", `Bearer ${token}`)
      .send({ api_key: API_KEY, entity_id: entityId });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body.imported).toBe(2);

    provider.faults.push({ route: "list", status: 500 });
    const failed = await http
      .post("/api/meetingnotes/sync")
      .set("Authorization", `Bearer ${token}`)
      .send({ api_key: API_KEY, entity_id: entityId });
    expect(failed.status).toBe(502);
    provider.faults.length = 0;

    // A refused key, and a key only known to us (the provider refuses it): logged paths on failure.
    const refused = await http
      .post("/api/meetingnotes/sync")
      .set("Authorization", `Bearer ${token}`)
      .send({ api_key: `${API_KEY}x`, entity_id: entityId });
    expect(refused.status).toBe(502);
    // A validation failure echoes nothing of the body either.
    const invalid = await http
      .post("/api/meetingnotes/sync")
      .set("Authorization", `Bearer ${token}`)
      .send({ api_key: API_KEY, entity_id: entityId, max_notes: 99 });
    expect(invalid.status).toBe(422);
    expect(JSON.stringify(invalid.body)).not.toContain(API_KEY);

    // The provider really received the key: the needle is the right one.
    expect(provider.requests.some((r) => r.authorization === `Bearer ${API_KEY}`)).toBe(true);

    // Redis: every key under this run's prefix, every value, every type. The sync jobs are gone.
    const values = await redisValues();
    expect(values.length).toBeGreaterThan(0);
    const leaks = values.filter((v) => NEEDLES.some((n) => v.text.includes(n)));
    expect(leaks.map((l) => l.key)).toEqual([]);
    const notesJobs = values.filter((v) => /:notes-sync:notes-/.test(v.key));
    expect(notesJobs.map((v) => v.key)).toEqual([]);

    // Postgres: every text, json and array column of every table.
    expect(await postgresHits()).toEqual([]);

    // Logs: lines were written (requests, worker events), none holds the key.
    expect(logLines.some((l) => l.includes('"msg":"request"'))).toBe(true);
    expect(logLines.some((l) => l.includes("meeting-note sync failed"))).toBe(true);
    expect(logLines.filter((l) => NEEDLES.some((n) => l.includes(n)))).toEqual([]);
  });

  it("the logger redacts api_key and credential fields wherever a caller might log them", () => {
    const before = logLines.length;
    deps.logger.info(
      { api_key: API_KEY, body: { api_key: API_KEY }, req: { body: { api_key: API_KEY } }, data: { credential: API_KEY } },
      "probe",
    );
    const line = logLines.slice(before).join("");
    expect(line).toContain("probe");
    expect(line).not.toContain(API_KEY);
  });
});

describe("sealed credentials", () => {
  const box = createSecretBoxFromKey(deriveSecretsKey("a-secrets-key-of-some-length"));

  it("round-trip, and never contain the clear value", () => {
    const sealed = box.seal(API_KEY, "sync-1");
    expect(NEEDLES.some((n) => sealed.includes(n))).toBe(false);
    expect(sealed).toMatch(/^v1\.[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(box.open(sealed, "sync-1")).toBe(API_KEY);
    expect(box.seal(API_KEY, "sync-1")).not.toBe(sealed); // a fresh nonce each time
  });

  it("do not open with other associated data, another key, or after tampering", () => {
    const sealed = box.seal(API_KEY, "sync-1");
    expect(() => box.open(sealed, "sync-2")).toThrow();
    const other = createSecretBoxFromKey(deriveSecretsKey("another-secrets-key-entirely"));
    expect(() => other.open(sealed, "sync-1")).toThrow();
    const parts = sealed.split(".");
    const ct = Buffer.from(parts[2] ?? "", "base64url");
    ct[0] = (ct[0] ?? 0) ^ 1;
    expect(() => box.open([parts[0], parts[1], ct.toString("base64url"), parts[3]].join("."), "sync-1")).toThrow();
    expect(() => box.open("v2.a.b.c", "sync-1")).toThrow();
  });

  it("are unavailable without SECRETS_KEY", () => {
    expect(secretBoxFor({ SECRETS_KEY: undefined })).toBeUndefined();
    expect(secretBoxFor({ SECRETS_KEY: "0123456789abcdef" })).toBeDefined();
  });
});
