import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/platform/config.js";

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
