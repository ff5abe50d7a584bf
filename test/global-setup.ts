import { existsSync } from "node:fs";
import type { TestProject } from "vitest/node";
import { databaseName, dropDatabase, ensureDatabase, onServer, withDatabase } from "../src/platform/database-admin.js";
import { MIGRATIONS_DIR, migrate } from "../src/platform/migrate.js";
import { type RedisClusterHandle, startRedisCluster } from "./support/redis-cluster.js";

/**
 * Once per test run: find PostgreSQL and Redis (DATABASE_URL/REDIS_URL when set, else
 * containers where a Docker engine exists, else the machine's own services), create a
 * fresh template database for this run and migrate it. Each test file clones the
 * template (see helpers/harness.ts), so runs and files never see each other's data.
 */
declare module "vitest" {
  export interface ProvidedContext {
    databaseUrl: string;
    templateDb: string;
    redisUrl: string;
    /** "cluster" in the cluster project (vitest.config.ts): the harness uses `redisClusterUrl`. */
    redisMode?: "single" | "cluster";
    /** A `redis+cluster://` URL of the run's local three-master cluster (cluster project only). */
    redisClusterUrl: string;
  }
}

const dockerAvailable = () => existsSync("/var/run/docker.sock") || Boolean(process.env.DOCKER_HOST);

async function startContainers() {
  const { PostgreSqlContainer } = await import("@testcontainers/postgresql");
  const { RedisContainer } = await import("@testcontainers/redis");
  const [pgc, redisc] = await Promise.all([
    new PostgreSqlContainer("postgres:16-alpine").start(),
    new RedisContainer("redis:7-alpine").start(),
  ]);
  return {
    databaseUrl: pgc.getConnectionUri(),
    redisUrl: redisc.getConnectionUrl(),
    stop: async () => {
      await Promise.allSettled([pgc.stop(), redisc.stop()]);
    },
  };
}

export default async function setup(project: TestProject) {
  let databaseUrl = process.env.DATABASE_URL;
  let redisUrl = process.env.REDIS_URL;
  let stopContainers: (() => Promise<void>) | undefined;
  if ((!databaseUrl || !redisUrl) && dockerAvailable()) {
    try {
      const started = await startContainers();
      databaseUrl ??= started.databaseUrl;
      redisUrl ??= started.redisUrl;
      stopContainers = started.stop;
    } catch (err) {
      console.warn(`testcontainers unavailable (${(err as Error).message}); using local services`);
    }
  }
  databaseUrl ??= "postgresql://postgres@127.0.0.1:5432/test";
  redisUrl ??= "redis://127.0.0.1:6379";

  await ensureDatabase(databaseUrl);
  const stamp = `${Date.now().toString(36)}${process.pid.toString(36)}`;
  const templateDb = `res_t_${stamp}`;
  await onServer(databaseUrl, (c) => c.query(`CREATE DATABASE "${templateDb}"`));
  await migrate(withDatabase(databaseUrl, templateDb), MIGRATIONS_DIR);

  project.provide("databaseUrl", databaseUrl);
  project.provide("templateDb", templateDb);
  project.provide("redisUrl", redisUrl);

  // The cluster project's suites share one local Redis Cluster for the run (REDIS_CLUSTER_URL
  // names an existing one instead), started only when that project runs (not with
  // `--project single`). Suites that break nodes start a cluster of their own.
  let cluster: RedisClusterHandle | undefined;
  if (project.vitest.projects.some((p) => p.config.provide?.redisMode === "cluster")) {
    let clusterUrl = process.env.REDIS_CLUSTER_URL;
    if (!clusterUrl) {
      cluster = await startRedisCluster({ masters: 3 });
      clusterUrl = cluster.url;
    }
    project.provide("redisClusterUrl", clusterUrl);
  }

  return async () => {
    const leftovers = await onServer(databaseUrl, async (c) => {
      const { rows } = await c.query<{ datname: string }>("SELECT datname FROM pg_database WHERE datname LIKE $1", [`${templateDb}%`]);
      return rows.map((r) => r.datname);
    });
    for (const name of leftovers.sort().reverse()) await dropDatabase(databaseUrl, name);
    if (databaseName(databaseUrl) === templateDb) throw new Error("refusing to drop the base database");
    await stopContainers?.();
    await cluster?.stop();
  };
}
