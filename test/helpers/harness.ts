import { randomBytes } from "node:crypto";
import type { Express } from "express";
import { SignJWT } from "jose";
import supertest from "supertest";
import { inject } from "vitest";
import { createApp } from "../../src/app.js";
import { type Config, loadConfig } from "../../src/platform/config.js";
import { createDatabaseFromTemplate, dropDatabase, withDatabase } from "../../src/platform/database-admin.js";
import { type AppDeps, closeDeps, createDeps } from "../../src/platform/deps.js";
import { deleteKeys, whenReady } from "../../src/platform/redis.js";
import { type ProcessorTable, startWorkers, type WorkerHandles } from "../../workers/runtime.js";

export const TEST_JWT_SECRET = "test-secret-for-hs256-tokens-only";

export interface Harness {
  deps: AppDeps;
  config: Config;
  app: Express;
  http: ReturnType<typeof supertest>;
  /** A signed bearer for `sub` (a fresh random subject when omitted). */
  token: (sub?: string, options?: TokenOptions) => Promise<string>;
  /** Starts in-process workers for the given processors; closed with the harness. */
  startWorkers: (processors: ProcessorTable, concurrency?: number) => WorkerHandles;
  close: () => Promise<void>;
}

export interface TokenOptions {
  secret?: string;
  expiresIn?: string | number;
  audience?: string;
  issuer?: string;
}

export const randomId = (prefix = "") => `${prefix}${randomBytes(6).toString("hex")}`;

export async function signToken(sub: string, options: TokenOptions = {}): Promise<string> {
  let jwt = new SignJWT({})
    .setProtectedHeader({ alg: "HS256" })
    .setSubject(sub)
    .setIssuedAt()
    .setExpirationTime(options.expiresIn ?? "1h");
  if (options.audience) jwt = jwt.setAudience(options.audience);
  if (options.issuer) jwt = jwt.setIssuer(options.issuer);
  return jwt.sign(new TextEncoder().encode(options.secret ?? TEST_JWT_SECRET));
}

/** The run's Redis: one node, or in the cluster project (vitest.config.ts) the local Redis Cluster. */
export function testRedisUrl(): string {
  if (inject("redisMode") !== "cluster") return inject("redisUrl");
  const url = inject("redisClusterUrl");
  if (!url) throw new Error("the cluster project runs without a Redis Cluster (see test/global-setup.ts)");
  return url;
}

/**
 * One per test file: a clone of the run's migrated template database, a Redis key
 * prefix of its own, and the real app built on them.
 */
export async function createHarness(overrides: Record<string, string> = {}): Promise<Harness> {
  const baseUrl = inject("databaseUrl");
  const template = inject("templateDb");
  const dbName = `${template}_${randomBytes(4).toString("hex")}`;
  await createDatabaseFromTemplate(baseUrl, dbName, template);
  const config = loadConfig({
    NODE_ENV: "test",
    DATABASE_URL: withDatabase(baseUrl, dbName),
    DATABASE_POOL_SIZE: "5",
    REDIS_URL: testRedisUrl(),
    REDIS_PREFIX: randomId("t"),
    AUTH_JWT_SECRET: TEST_JWT_SECRET,
    ADMIN_USER: "operator",
    ADMIN_PASSWORD: "operator-password",
    SECRETS_KEY: "test-secrets-key-0123456789abcdef",
    LOG_LEVEL: "silent",
    RATE_LIMIT_PER_MINUTE: "0",
    ...overrides,
  });
  const deps = createDeps(config, "test");
  await whenReady(deps.redis, 5000);
  const app = createApp(deps);
  const workerHandles: WorkerHandles[] = [];

  return {
    deps,
    config,
    app,
    http: supertest(app),
    token: (sub = randomId("user-"), options = {}) => signToken(sub, options),
    startWorkers: (processors, concurrency = 2) => {
      const handles = startWorkers(deps, processors, { concurrency });
      workerHandles.push(handles);
      return handles;
    },
    close: async () => {
      await Promise.allSettled(workerHandles.map((w) => w.close()));
      // SCAN on every master when Redis is a cluster; one node otherwise.
      await deleteKeys(deps.redis, `${config.REDIS_PREFIX}:*`).catch(() => 0);
      await closeDeps(deps);
      await dropDatabase(baseUrl, dbName);
    },
  };
}
