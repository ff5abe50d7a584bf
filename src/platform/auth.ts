import { createHash, randomBytes } from "node:crypto";
import { createRemoteJWKSet, type JWTPayload, errors as joseErrors, jwtVerify } from "jose";
import { LRUCache } from "lru-cache";
import type { Config } from "./config.js";
import type { Db } from "./db.js";
import { AppError } from "./errors.js";

/**
 * Credentials: a user-session bearer (JWT, verified with jose) or a scoped API key
 * (`svc_live_…`, stored only as a SHA-256 hash). Keys act as their owning user.
 */
export const API_KEY_SCOPES = ["ingest", "export", "*"] as const;
export type ApiKeyScope = (typeof API_KEY_SCOPES)[number];
export const API_KEY_PREFIX = "svc_live_";

export interface AuthUser {
  id: string;
  sub: string;
  rawExportEnabled: boolean;
  isInternalAgent: boolean;
}

export interface AuthContext {
  user: AuthUser;
  via: "bearer" | "key";
  key?: { id: string; scopes: ApiKeyScope[] };
  /** The key scope that let this request through, recorded in the key's usage. */
  scopeUsed?: ApiKeyScope;
}

/**
 * What a route accepts: no credential at all, or any combination of a user bearer and
 * keys holding one of `keys`. `rawExport` additionally requires the account to have raw
 * export enabled by an operator (or to be an internal agent). `userFlags` says the route reads
 * the caller's flags (raw export, internal agent), so they are read fresh for it rather than
 * taken from the bearer's remembered user (see `Authenticator.userForSubject`).
 */
export type AuthRule = { public: true } | { bearer: boolean; keys: readonly ApiKeyScope[]; rawExport?: boolean; userFlags?: boolean };

export const AUTH = {
  public: { public: true },
  bearerOnly: { bearer: true, keys: [] },
  ingest: { bearer: true, keys: ["ingest", "*"] },
  full: { bearer: true, keys: ["*"] },
  exportTable: { bearer: false, keys: ["export", "*"], rawExport: true },
  exportAudit: { bearer: true, keys: ["export", "*"], rawExport: true },
} as const satisfies Record<string, AuthRule>;

const challenge = (error?: string) => (error ? `Bearer realm="research-evidence", error="${error}"` : `Bearer realm="research-evidence"`);

function unauthorized(code: "unauthorized" | "invalid_token" | "bearer_required" | "key_revoked", detail: string) {
  return new AppError(code, detail, {
    headers: { "WWW-Authenticate": challenge(code === "unauthorized" ? undefined : "invalid_token") },
  });
}

export const hashApiKey = (raw: string) => createHash("sha256").update(raw, "utf8").digest("hex");

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
/** `svc_live_` + 40 base62 characters from a CSPRNG (rejection sampling, no modulo bias). */
export function generateApiKey(): string {
  let out = "";
  while (out.length < 40) {
    for (const byte of randomBytes(64)) {
      if (byte < 248 && out.length < 40) out += BASE62[byte % 62];
    }
  }
  return API_KEY_PREFIX + out;
}

type Verifier = (token: string) => Promise<JWTPayload>;

/** Longest lifetime (exp − iat) of a bearer signed with AUTH_JWT_SECRET; `npm run token` mints within it. */
export const MAX_LOCAL_TOKEN_TTL_SECONDS = 7 * 24 * 3600;

class TokenLifetimeError extends Error {}

/**
 * How long a verified bearer is remembered (never past its `exp`). A bearer is the same bytes on
 * every request of an agent's session, and its HMAC or signature check is the largest CPU cost
 * of an authenticated request; the token itself is the cache key, so only bytes that passed
 * the full check are ever accepted without it.
 */
const VERIFIED_TOKEN_TTL_MS = 60_000;
const VERIFIED_TOKENS_MAX = 10_000;

function remembered(verify: Verifier): Verifier {
  const verified = new LRUCache<string, JWTPayload>({ max: VERIFIED_TOKENS_MAX });
  return async (token) => {
    const hit = verified.get(token);
    if (hit) return hit;
    const payload = Object.freeze(await verify(token));
    const untilExp = (payload.exp as number) * 1000 - Date.now();
    if (untilExp > 0) verified.set(token, payload, { ttl: Math.min(untilExp, VERIFIED_TOKEN_TTL_MS) });
    return payload;
  };
}

export function createJwtVerifier(config: Config): Verifier {
  return remembered(jwtVerifier(config));
}

function jwtVerifier(config: Config): Verifier {
  const options = {
    ...(config.AUTH_ISSUER ? { issuer: config.AUTH_ISSUER } : {}),
    ...(config.AUTH_AUDIENCE ? { audience: config.AUTH_AUDIENCE } : {}),
  };
  if (config.AUTH_JWKS_URL) {
    const jwks = createRemoteJWKSet(new URL(config.AUTH_JWKS_URL));
    return async (token) =>
      (await jwtVerify(token, jwks, { ...options, requiredClaims: ["exp"], algorithms: ["RS256", "ES256", "PS256", "EdDSA"] })).payload;
  }
  const secret = new TextEncoder().encode(config.AUTH_JWT_SECRET ?? "");
  return async (token) => {
    const { payload } = await jwtVerify(token, secret, { ...options, requiredClaims: ["exp"], algorithms: ["HS256"] });
    const from = typeof payload.iat === "number" ? payload.iat : Math.floor(Date.now() / 1000);
    if ((payload.exp as number) - from > MAX_LOCAL_TOKEN_TTL_SECONDS) throw new TokenLifetimeError();
    return payload;
  };
}

function describeJwtFailure(err: unknown): string {
  if (err instanceof joseErrors.JWTExpired) return "The bearer token has expired.";
  if (err instanceof TokenLifetimeError) {
    return `The bearer token lives longer than ${MAX_LOCAL_TOKEN_TTL_SECONDS / 86400} days (exp − iat); mint one that expires sooner.`;
  }
  if (err instanceof joseErrors.JWTClaimValidationFailed && err.claim === "exp" && err.reason === "missing") {
    return "The bearer token has no 'exp' claim: bearers must expire.";
  }
  if (err instanceof joseErrors.JWTClaimValidationFailed) return `The bearer token's ${err.claim} claim is not accepted.`;
  if (err instanceof joseErrors.JWSSignatureVerificationFailed) return "The bearer token's signature is invalid.";
  return "The bearer token is malformed or cannot be verified.";
}

/** A request's credential and the header it came in. */
export interface Credential {
  value: string;
  header: "authorization" | "x-api-key";
}

/**
 * Reads the credential of a request: `Authorization: Bearer …` or `X-API-Key`. A request carries
 * one credential: two different ones (a key and another user's bearer, say) are refused rather
 * than one silently chosen; the same key in both headers is that key.
 */
export function readCredential(headers: { authorization?: string; "x-api-key"?: string | string[] }): Credential | undefined {
  const apiKeyHeader = headers["x-api-key"];
  if (Array.isArray(apiKeyHeader)) throw unauthorized("invalid_token", "Send one X-API-Key header, not several.");
  const apiKey = apiKeyHeader?.trim() || undefined;
  const auth = headers.authorization;
  let bearer: string | undefined;
  if (auth) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(auth);
    if (!match?.[1]) throw unauthorized("invalid_token", "The Authorization header must be 'Bearer <token>'.");
    bearer = match[1];
  }
  if (apiKey && bearer && apiKey !== bearer) {
    throw unauthorized("invalid_token", "The request carries two different credentials (X-API-Key and Authorization): send exactly one.");
  }
  if (apiKey) return { value: apiKey, header: "x-api-key" };
  return bearer ? { value: bearer, header: "authorization" } : undefined;
}

const USERS_REMEMBERED = 10_000;
const USER_REMEMBERED_MS = 60_000;

export class Authenticator {
  private readonly verify: Verifier;

  /** Users of recent bearers, by subject (a subject's row keeps its id for good). */
  private readonly users = new LRUCache<string, AuthUser>({ max: USERS_REMEMBERED, ttl: USER_REMEMBERED_MS });

  constructor(
    private readonly db: Db,
    config: Config,
    /** Told, once a minute at most for a subject, of a user signing in with a verified email claim. */
    private readonly onSignIn?: (userId: string, email: string) => Promise<unknown>,
  ) {
    this.verify = createJwtVerifier(config);
  }

  /**
   * Finds or creates the user row for a verified subject. A known subject is a read; only
   * a new one writes (race-safe upsert), so requests do not queue on the user row's lock.
   * The row is remembered for a minute, so an agent's stream of requests costs one read a
   * minute; `fresh` reads it again, for the routes that act on the user's flags (an
   * operator's change of them applies there at once).
   */
  async userForSubject(sub: string, fresh = false): Promise<AuthUser> {
    const known = fresh ? undefined : this.users.get(sub);
    if (known) return known;
    type UserRow = { id: string; sub: string; raw_export_enabled: boolean; is_internal_agent: boolean };
    const found = await this.db.$queryRaw<UserRow[]>`
      SELECT id, sub, raw_export_enabled, is_internal_agent FROM users WHERE sub = ${sub}`;
    const rows =
      found.length > 0
        ? found
        : await this.db.$queryRaw<UserRow[]>`INSERT INTO users (id, sub) VALUES (gen_random_uuid(), ${sub})
            ON CONFLICT (sub) DO UPDATE SET sub = EXCLUDED.sub
            RETURNING id, sub, raw_export_enabled, is_internal_agent`;
    const row = rows[0];
    if (!row) throw new Error("user upsert returned no row");
    const user = Object.freeze({
      id: row.id,
      sub: row.sub,
      rawExportEnabled: row.raw_export_enabled,
      isInternalAgent: row.is_internal_agent,
    });
    this.users.set(sub, user);
    return user;
  }

  /**
   * Authenticates a credential against a route's rule. Throws 401 for a missing, invalid
   * or revoked credential, or a key where only a bearer is accepted; 403 for a valid
   * credential that lacks a scope or raw-export enablement. `onKey` is told of every
   * key that was identified, so refused keyed requests are recorded in its usage too.
   */
  async authenticate(
    credential: Credential | undefined,
    rule: AuthRule,
    onKey?: (ctx: AuthContext) => void,
  ): Promise<AuthContext | undefined> {
    if ("public" in rule) return undefined;
    if (!credential) throw unauthorized("unauthorized", "A credential is required: send 'Authorization: Bearer <token>'.");

    let ctx: AuthContext;
    if (credential.header === "x-api-key" && !credential.value.startsWith(API_KEY_PREFIX)) {
      throw unauthorized("invalid_token", `The X-API-Key header does not hold an API key (API keys start with '${API_KEY_PREFIX}').`);
    }
    if (credential.value.startsWith(API_KEY_PREFIX)) {
      const key = await this.db.apiKey.findUnique({
        where: { keyHash: hashApiKey(credential.value) },
        include: { user: true },
      });
      if (!key) throw unauthorized("invalid_token", "The API key is not recognised.");
      const scopes = key.scopes.filter((s): s is ApiKeyScope => (API_KEY_SCOPES as readonly string[]).includes(s));
      ctx = {
        via: "key",
        key: { id: key.id, scopes },
        user: {
          id: key.user.id,
          sub: key.user.sub,
          rawExportEnabled: key.user.rawExportEnabled,
          isInternalAgent: key.user.isInternalAgent,
        },
      };
      onKey?.(ctx);
      if (!key.isActive) throw unauthorized("key_revoked", "The API key has been revoked.");
      if (rule.keys.length === 0) {
        throw unauthorized("bearer_required", "This operation requires a user session bearer; API keys are not accepted.");
      }
      const granted = rule.keys.find((s) => scopes.includes(s));
      if (!granted) {
        throw new AppError("insufficient_scope", `This operation needs an API key with one of the scopes: ${rule.keys.join(", ")}.`);
      }
      ctx.scopeUsed = granted;
    } else {
      let payload: JWTPayload;
      try {
        payload = await this.verify(credential.value);
      } catch (err) {
        throw unauthorized("invalid_token", describeJwtFailure(err));
      }
      if (typeof payload.sub !== "string" || payload.sub.length === 0 || payload.sub.length > 255) {
        throw unauthorized("invalid_token", "The bearer token has no usable 'sub' claim.");
      }
      if (!rule.bearer) {
        throw new AppError("insufficient_scope", `This operation needs an API key with one of the scopes: ${rule.keys.join(", ")}.`);
      }
      const remembered = this.users.has(payload.sub);
      ctx = { via: "bearer", user: await this.userForSubject(payload.sub, rule.rawExport === true || rule.userFlags === true) };
      // A verified email accepts the invitations waiting for it. Verified is the boolean `true`, or no
      // `email_verified` claim at all (providers that only issue verified emails leave it out); anything
      // else (`false`, the string "false", even the string "true") is an unverified claim.
      const verified = payload.email_verified === true || payload.email_verified === undefined;
      const email = typeof payload.email === "string" && verified ? payload.email.trim().toLowerCase() : "";
      if (!remembered && this.onSignIn && email.length > 0 && email.length <= 320) await this.onSignIn(ctx.user.id, email);
    }

    if (rule.rawExport && !ctx.user.rawExportEnabled && !ctx.user.isInternalAgent) {
      throw new AppError("raw_export_disabled", "Raw export is not enabled for this account; an operator must enable it.");
    }
    return ctx;
  }

  async recordKeyUsage(ctx: AuthContext, method: string, route: string, statusCode: number): Promise<void> {
    if (!ctx.key) return;
    await this.db.$executeRaw`WITH touched AS (
        UPDATE api_keys SET last_used_at = now() WHERE id = ${ctx.key.id}::uuid RETURNING id
      )
      INSERT INTO api_key_usage (key_id, method, route, status_code, scope_used)
      SELECT id, ${method}, ${route}, ${statusCode}, ${ctx.scopeUsed ?? null} FROM touched`;
  }
}

/** The caller's user id on a route that requires a credential. */
export function callerId(auth: AuthContext | undefined): string {
  if (!auth) throw new AppError("unauthorized", "A credential is required.");
  return auth.user.id;
}
