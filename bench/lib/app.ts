import { once } from "node:events";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { SignJWT } from "jose";
import { createApp } from "../../src/app.js";
import { type Config, loadConfig } from "../../src/platform/config.js";
import { type AppDeps, createDeps } from "../../src/platform/deps.js";
import { whenReady } from "../../src/platform/redis.js";

/**
 * The real web application on a local port for a benchmark, configured as production
 * (silent logs, no rate limit) on the given database, with a way to mint user bearers.
 * Like the web process, it waits for Redis before building the app.
 */
export interface BenchApp {
  config: Config;
  deps: AppDeps;
  server: Server;
  base: string;
  token: (sub: string, expiresIn?: string) => Promise<string>;
}

export async function startBenchApp(options: {
  databaseUrl: string;
  secret: string;
  redisPrefix: string;
  poolSize?: number;
}): Promise<BenchApp> {
  const config = loadConfig({
    NODE_ENV: "production",
    DATABASE_URL: options.databaseUrl,
    DATABASE_POOL_SIZE: String(options.poolSize ?? 10),
    AUTH_JWT_SECRET: options.secret,
    LOG_LEVEL: "silent",
    RATE_LIMIT_PER_MINUTE: "0",
    REDIS_PREFIX: options.redisPrefix,
  });
  const deps = createDeps(config, "bench");
  // As the web process does: queues created (by the admin board) before Redis is ready never enqueue.
  await whenReady(deps.redis, 5000);
  const server = createApp(deps).listen(0, "127.0.0.1");
  await once(server, "listening");
  const key = new TextEncoder().encode(options.secret);
  return {
    config,
    deps,
    server,
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    token: (sub, expiresIn = "1h") =>
      new SignJWT({}).setProtectedHeader({ alg: "HS256" }).setSubject(sub).setExpirationTime(expiresIn).sign(key),
  };
}
