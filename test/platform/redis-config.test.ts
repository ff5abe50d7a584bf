import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/platform/config.js";
import { parseClusterUrl } from "../../src/platform/redis.js";

const base = { AUTH_JWT_SECRET: "a-secret-of-16-chars" };

describe("Redis configuration", () => {
  it("stays single-node by default", () => {
    expect(parseClusterUrl(loadConfig(base).REDIS_URL)).toBeUndefined();
  });

  it("takes a redis+cluster:// URL with its seeds and credentials", () => {
    const config = loadConfig({ ...base, REDIS_URL: "rediss+cluster://app:s%40cret@10.0.0.1:7000,10.0.0.2:7001" });
    expect(parseClusterUrl(config.REDIS_URL)).toEqual({
      nodes: [
        { host: "10.0.0.1", port: 7000 },
        { host: "10.0.0.2", port: 7001 },
      ],
      username: "app",
      password: "s@cret",
      tls: true,
    });
  });

  it("takes REDIS_CLUSTER_NODES as the seeds, with scheme and credentials from REDIS_URL", () => {
    const config = loadConfig({ ...base, REDIS_URL: "redis://:pw@ignored:6379", REDIS_CLUSTER_NODES: "a:7000, b:7001 ,c:7002" });
    expect(config.REDIS_URL).toBe("redis+cluster://:pw@a:7000,b:7001,c:7002");
    expect(parseClusterUrl(config.REDIS_URL)).toEqual({
      nodes: [
        { host: "a", port: 7000 },
        { host: "b", port: 7001 },
        { host: "c", port: 7002 },
      ],
      password: "pw",
      tls: false,
    });
  });

  it("refuses seeds without ports", () => {
    expect(() => loadConfig({ ...base, REDIS_CLUSTER_NODES: "a,b:7001" })).toThrow(ConfigError);
    expect(() => loadConfig({ ...base, REDIS_CLUSTER_NODES: "a,b:7001" })).toThrow(
      /REDIS_CLUSTER_NODES: must be comma-separated host:port seeds/,
    );
  });
});
