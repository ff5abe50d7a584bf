import { spawnSync } from "node:child_process";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { projectRoot } from "../../src/platform/paths.js";
import { ensureBuilt, npmScriptArgv } from "../helpers/compiled.js";
import { createHarness, type Harness, signToken, TEST_JWT_SECRET } from "../helpers/harness.js";

describe("bearer JWT (HS256, with issuer and audience)", () => {
  let h: Harness;
  const claims = { issuer: "https://id.example.test", audience: "research-evidence" };
  beforeAll(async () => {
    h = await createHarness({ AUTH_ISSUER: claims.issuer, AUTH_AUDIENCE: claims.audience });
  });
  afterAll(() => h.close());
  const list = (auth?: string) => {
    const req = h.http.get("/api/user/keys");
    return auth === undefined ? req : req.set("Authorization", auth);
  };

  it("accepts a valid token and creates the user on first sight", async () => {
    const token = await signToken("first-sight", claims);
    const res = await list(`Bearer ${token}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ keys: [] });
    const user = await h.deps.db.user.findUnique({ where: { sub: "first-sight" } });
    expect(user).not.toBeNull();
    await list(`Bearer ${token}`);
    expect(await h.deps.db.user.count({ where: { sub: "first-sight" } })).toBe(1);
  });

  it("answers 401 with WWW-Authenticate when the credential is missing", async () => {
    const res = await list();
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ detail: expect.any(String), code: "unauthorized" });
    expect(res.headers["www-authenticate"]).toBe('Bearer realm="research-evidence"');
  });

  it("answers 401 invalid_token for malformed, expired, wrongly signed and wrong-audience tokens", async () => {
    const cases: [string, string, RegExp][] = [
      ["malformed header", "Token abc", /Bearer <token>/],
      ["not a JWT", "Bearer not.a.jwt", /malformed|cannot be verified/],
      ["expired", `Bearer ${await signToken("u1", { ...claims, expiresIn: Math.floor(Date.now() / 1000) - 60 })}`, /expired/],
      ["wrong signature", `Bearer ${await signToken("u1", { ...claims, secret: `${TEST_JWT_SECRET}-other` })}`, /signature/],
      ["wrong audience", `Bearer ${await signToken("u1", { ...claims, audience: "someone-else" })}`, /aud/],
      ["wrong issuer", `Bearer ${await signToken("u1", { ...claims, issuer: "https://evil.test" })}`, /iss/],
      ["no audience", `Bearer ${await signToken("u1", { issuer: claims.issuer })}`, /aud/],
    ];
    for (const [name, header, detail] of cases) {
      const res = await list(header);
      expect(res.status, name).toBe(401);
      expect(res.body.code, name).toBe("invalid_token");
      expect(res.body.detail, name).toMatch(detail);
      expect(res.headers["www-authenticate"], name).toContain('error="invalid_token"');
    }
  });

  it("refuses a token signed with 'none' or without a subject", async () => {
    const unsigned = `${Buffer.from('{"alg":"none"}').toString("base64url")}.${Buffer.from(
      JSON.stringify({ sub: "x", aud: claims.audience, iss: claims.issuer }),
    ).toString("base64url")}.`;
    expect((await list(`Bearer ${unsigned}`)).status).toBe(401);
    const noSub = await new SignJWT({})
      .setProtectedHeader({ alg: "HS256" })
      .setAudience(claims.audience)
      .setIssuer(claims.issuer)
      .setExpirationTime("1h")
      .sign(new TextEncoder().encode(TEST_JWT_SECRET));
    const res = await list(`Bearer ${noSub}`);
    expect(res.status).toBe(401);
    expect(res.body.detail).toMatch(/sub/);
  });

  it("refuses an unknown API key", async () => {
    const res = await list(`Bearer svc_live_${"x".repeat(40)}`);
    expect(res.status).toBe(401);
    expect(res.body.code).toBe("invalid_token");
  });

  it("refuses a bearer without an expiry, and a local one that lives longer than 7 days", async () => {
    const noExp = await new SignJWT({})
      .setProtectedHeader({ alg: "HS256" })
      .setSubject("never-expires")
      .setAudience(claims.audience)
      .setIssuer(claims.issuer)
      .setIssuedAt()
      .sign(new TextEncoder().encode(TEST_JWT_SECRET));
    const res = await list(`Bearer ${noExp}`);
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ code: "invalid_token", detail: "The bearer token has no 'exp' claim: bearers must expire." });
    expect(await h.deps.db.user.count({ where: { sub: "never-expires" } })).toBe(0);

    const longLived = await signToken("long-lived", { ...claims, expiresIn: "8d" });
    const long = await list(`Bearer ${longLived}`);
    expect(long.status).toBe(401);
    expect(long.body.detail).toMatch(/longer than 7 days/);
    expect((await list(`Bearer ${await signToken("week", { ...claims, expiresIn: "7d" })}`)).status).toBe(200);
  });

  it("refuses two different credentials in one request instead of choosing one", async () => {
    const alice = await signToken("two-creds-alice", claims);
    const bob = await signToken("two-creds-bob", claims);
    const created = await h.http
      .post("/api/user/keys")
      .set("Authorization", `Bearer ${alice}`)
      .send({ name: "k", scopes: ["*"] });
    expect(created.status).toBe(201);
    const aliceKey: string = created.body.raw_key;
    const both = await h.http.get("/api/user/keys").set("X-API-Key", aliceKey).set("Authorization", `Bearer ${bob}`);
    expect(both.status).toBe(401);
    expect(both.body.code).toBe("invalid_token");
    expect(both.body.detail).toMatch(/two different credentials/);
    // The same key in both headers is one credential.
    const same = await h.http.get("/api/entities").set("X-API-Key", aliceKey).set("Authorization", `Bearer ${aliceKey}`);
    expect(same.status).not.toBe(401);
  });

  it("names the header that carried an unusable credential", async () => {
    const res = await h.http.get("/api/entities").set("X-API-Key", "garbage");
    expect(res.status).toBe(401);
    expect(res.body.detail).toBe("The X-API-Key header does not hold an API key (API keys start with 'svc_live_').");
    const bearer = await list("Bearer garbage");
    expect(bearer.body.detail).toMatch(/bearer token is malformed/);
  });

  it("accepts a remembered bearer only until it expires", async () => {
    const exp = Math.floor(Date.now() / 1000) + 2;
    const token = `Bearer ${await signToken("short-lived", { ...claims, expiresIn: exp })}`;
    expect((await list(token)).status).toBe(200);
    expect((await list(token)).status).toBe(200);
    await new Promise((r) => setTimeout(r, exp * 1000 - Date.now() + 50));
    const late = await list(token);
    expect(late.status).toBe(401);
    expect(late.body).toEqual({ code: "invalid_token", detail: "The bearer token has expired." });
  });

  it("reads the caller's flags fresh on the routes that act on them", async () => {
    const token = `Bearer ${await signToken("flags-change", claims)}`;
    const connection = () => h.http.get("/agent/v1/connection").set("Authorization", token);
    expect((await list(token)).status).toBe(200);
    expect((await connection()).body.raw_export_enabled).toBe(false);
    await h.deps.db.user.update({ where: { sub: "flags-change" }, data: { rawExportEnabled: true } });
    expect((await connection()).body.raw_export_enabled).toBe(true);
    await h.deps.db.user.update({ where: { sub: "flags-change" }, data: { rawExportEnabled: false, isInternalAgent: true } });
    expect((await connection()).body.raw_export_enabled).toBe(true);
    await h.deps.db.user.update({ where: { sub: "flags-change" }, data: { isInternalAgent: false } });
    expect((await connection()).body.raw_export_enabled).toBe(false);
  });
});

describe("npm run token", () => {
  // The npm script's command: the compiled script in dist/.
  beforeAll(ensureBuilt);
  const run = (...args: string[]) => {
    const [node, ...command] = npmScriptArgv("token");
    return spawnSync(node, [...command, ...args], {
      cwd: projectRoot(),
      encoding: "utf8",
      env: { ...process.env, AUTH_JWT_SECRET: TEST_JWT_SECRET },
    });
  };

  it("says the ttl is invalid instead of crashing, and bounds it", () => {
    for (const ttl of ["abc", "-5", "1.5", "0", String(8 * 24 * 3600)]) {
      const out = run("alice", ttl);
      expect(out.status, ttl).toBe(2);
      expect(out.stderr, ttl).toMatch(/ttl .*(invalid|out of range)|invalid ttl/);
      expect(out.stderr, ttl).not.toMatch(/\n\s+at /);
    }
    // --help prints the usage and no token; an unknown option is refused rather than taken as a subject.
    const help = run("--help");
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/^usage: npm run token -- <sub>/);
    expect(help.stdout).not.toMatch(/eyJ/);
    const bogus = run("--bogus");
    expect(bogus.status).toBe(2);
    expect(bogus.stdout).toBe("");
    expect(bogus.stderr).toMatch(/unknown option '--bogus'/);
    const ok = run("alice", "60");
    expect(ok.status).toBe(0);
    const [, payload] = ok.stdout.trim().split(".");
    const claims = JSON.parse(Buffer.from(payload ?? "", "base64url").toString("utf8"));
    expect(claims.exp - claims.iat).toBe(60);
  });
});

describe("bearer JWT verified against a JWKS endpoint", () => {
  let h: Harness;
  let server: Server;
  let sign: (sub: string, kid?: string) => Promise<string>;
  beforeAll(async () => {
    const { publicKey, privateKey } = await generateKeyPair("RS256");
    const jwk = { ...(await exportJWK(publicKey)), kid: "k1", alg: "RS256", use: "sig" };
    server = createServer((req, res) => {
      if (req.url === "/.well-known/jwks.json") {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ keys: [jwk] }));
      } else {
        res.writeHead(404).end();
      }
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as AddressInfo).port;
    h = await createHarness({
      AUTH_JWT_SECRET: "",
      AUTH_JWKS_URL: `http://127.0.0.1:${port}/.well-known/jwks.json`,
      AUTH_ISSUER: "https://idp.test",
      AUTH_AUDIENCE: "api://research",
    });
    sign = (sub, kid = "k1") =>
      new SignJWT({})
        .setProtectedHeader({ alg: "RS256", kid })
        .setSubject(sub)
        .setIssuer("https://idp.test")
        .setAudience("api://research")
        .setExpirationTime("5m")
        .sign(privateKey);
  });
  afterAll(async () => {
    await h.close();
    server.close();
  });

  it("accepts a token signed by the identity provider's key", async () => {
    const res = await h.http.get("/api/user/keys").set("Authorization", `Bearer ${await sign("oidc-user")}`);
    expect(res.status).toBe(200);
  });

  it("refuses an HS256 token and a token with an unknown key id", async () => {
    const hs = await signToken("oidc-user", { issuer: "https://idp.test", audience: "api://research" });
    expect((await h.http.get("/api/user/keys").set("Authorization", `Bearer ${hs}`)).status).toBe(401);
    const unknownKid = await sign("oidc-user", "k-unknown");
    expect((await h.http.get("/api/user/keys").set("Authorization", `Bearer ${unknownKid}`)).status).toBe(401);
  });
});
