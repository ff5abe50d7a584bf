import type { AppDeps } from "../../platform/deps.js";
import { whenReady } from "../../platform/redis.js";
import { within } from "../../platform/timeout.js";

type DependencyState = { status: "ok" | "unavailable"; latency_ms: number | null; error?: string };

async function probe(check: () => Promise<unknown>, timeoutMs: number): Promise<DependencyState> {
  const started = performance.now();
  try {
    await within(check(), timeoutMs);
    return { status: "ok", latency_ms: Math.round((performance.now() - started) * 10) / 10 };
  } catch (err) {
    return { status: "unavailable", latency_ms: null, error: (err as Error).message.split("\n")[0]?.slice(0, 200) ?? "" };
  }
}

export async function checkHealth(deps: Pick<AppDeps, "db" | "redis" | "version">) {
  const [postgres, redis] = await Promise.all([
    probe(() => deps.db.$queryRaw`SELECT 1`, 2000),
    probe(async () => {
      await whenReady(deps.redis, 1000);
      return deps.redis.ping();
    }, 2000),
  ]);
  const ok = postgres.status === "ok" && redis.status === "ok";
  return {
    status: ok ? ("ok" as const) : ("degraded" as const),
    version: deps.version,
    time: new Date().toISOString(),
    dependencies: { postgres, redis },
  };
}
