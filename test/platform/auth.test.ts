import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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
