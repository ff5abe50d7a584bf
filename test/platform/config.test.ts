import { spawnSync } from "node:child_process";
import { beforeAll, describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/platform/config.js";
import { projectRoot } from "../../src/platform/paths.js";
import { ensureBuilt, procfileArgv } from "../helpers/compiled.js";

describe("configuration", () => {
  it("starts from defaults with only a JWT secret", () => {
    const config = loadConfig({ AUTH_JWT_SECRET: "a-secret-of-16-chars" });
    expect(config.PORT).toBe(3000);
    expect(config.DATABASE_URL).toMatch(/^postgresql:\/\//);
    expect(config.REDIS_URL).toBe("redis://127.0.0.1:6379");
  });

  it("names every bad variable in one message", () => {
    const attempt = () => loadConfig({ DATABASE_URL: "mysql://x", PORT: "99999", ADMIN_USER: "ops" });
    expect(attempt).toThrow(ConfigError);
    try {
      attempt();
    } catch (err) {
      const message = (err as Error).message;
      expect(message).toContain("DATABASE_URL: must be a postgresql:// connection URL");
      expect(message).toContain("PORT:");
      expect(message).toContain("AUTH_JWT_SECRET: set AUTH_JWT_SECRET");
      expect(message).toContain("ADMIN_PASSWORD: ADMIN_USER and ADMIN_PASSWORD go together");
    }
  });

  it("requires issuer and audience with a JWKS URL", () => {
    expect(() => loadConfig({ AUTH_JWKS_URL: "https://idp.test/jwks.json" })).toThrow(/AUTH_ISSUER/);
    const ok = loadConfig({ AUTH_JWKS_URL: "https://idp.test/jwks.json", AUTH_ISSUER: "https://idp.test", AUTH_AUDIENCE: "api" });
    expect(ok.AUTH_JWKS_URL).toBe("https://idp.test/jwks.json");
  });
});

describe("the Procfile's processes (compiled, as production runs them)", () => {
  beforeAll(ensureBuilt);

  it("end with a bad configuration with exit 1 and the problems, not a stack trace", () => {
    const root = projectRoot();
    const run = (type: "release" | "web" | "worker") => {
      const [node, ...args] = procfileArgv(type);
      return spawnSync(node, args, {
        cwd: root,
        env: { PATH: process.env.PATH ?? "", PORT: "not-a-port", DATABASE_URL: "mysql://x", AUTH_JWT_SECRET: "a-secret-of-16-chars" },
        encoding: "utf8",
        timeout: 30_000,
      });
    };
    for (const name of ["web", "worker"] as const) {
      const web = run(name);
      expect(web.status, web.stderr).toBe(1);
      expect(web.stderr).toBe("");
      const lines = web.stdout.trim().split("\n");
      expect(lines).toHaveLength(1);
      expect(JSON.parse(lines[0] as string)).toMatchObject({
        level: 60,
        process: name,
        msg: "invalid configuration: the process cannot start",
        problems: ["PORT: Invalid input: expected number, received NaN", "DATABASE_URL: must be a postgresql:// connection URL"],
      });
    }
    const migrate = run("release");
    expect(migrate.status).toBe(1);
    expect(migrate.stdout).toBe("");
    expect(migrate.stderr).toBe(
      "db:migrate: Invalid configuration:\n  PORT: Invalid input: expected number, received NaN\n  DATABASE_URL: must be a postgresql:// connection URL\n",
    );
  });
});
