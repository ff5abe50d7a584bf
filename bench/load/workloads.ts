import { randomUUID } from "node:crypto";
import type autocannon from "autocannon";
import { SignJWT } from "jose";

/**
 * The mixed workload: seed data for many users, then one autocannon instance per kind
 * of request, all running at once. Normal traffic is spread over many users so that no
 * user reaches the per-user rate limit; one "greedy" API key deliberately exceeds its
 * own limit, so its 429s are expected and counted apart.
 */
const WORDS = (
  "pricing onboarding support dashboard export latency billing invoice integration sso audit " +
  "search alerts mobile api webhook sandbox migration roadmap churn renewal contract trial seats " +
  "reports charts filters permissions roles workspace slack email calendar sync offline outage " +
  "performance security compliance gdpr backup restore import csv schema tagging notes comments"
).split(" ");

export interface User {
  token: string;
  entityId: string;
}

export interface Seeded {
  users: User[];
  greedyKey: string;
}

let counter = 0;
const next = () => ++counter;
const pick = <T>(list: T[]): T => list[next() % list.length] as T;
const sentence = (n: number) => Array.from({ length: n }, (_, i) => WORDS[(i * 7 + next()) % WORDS.length]).join(" ");

async function call(base: string, token: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path} answered ${res.status}: ${text.slice(0, 300)}`);
  return JSON.parse(text) as Record<string, unknown>;
}

export async function seed(base: string, secret: string, userCount: number): Promise<Seeded> {
  const key = new TextEncoder().encode(secret);
  const token = (sub: string) =>
    new SignJWT({}).setProtectedHeader({ alg: "HS256" }).setSubject(sub).setIssuedAt().setExpirationTime("2h").sign(key);
  const users: User[] = [];
  for (let i = 0; i < userCount; i++) {
    const t = await token(`load-user-${i}-${randomUUID()}`);
    const entity = await call(base, t, "POST", "/api/entities", {
      name: `Load Co ${i}`,
      keywords: ["loadco", pick(WORDS)],
      platforms: ["hackernews"],
    });
    for (let p = 0; p < 10; p++) {
      await call(base, t, "POST", "/agent/v1/context/save", {
        title: `Note ${p}: ${sentence(4)}`,
        content: sentence(120),
        tags: [pick(WORDS)],
      });
    }
    await call(base, t, "POST", "/agent/v1/ingest/content", {
      entity_id: entity.id,
      sources: Array.from({ length: 20 }, (_, n) => ({
        id: `seed-${i}-${n}`,
        platform: "reddit",
        url: `https://example.com/seed/${i}/${n}`,
        title: sentence(6),
        content: `${sentence(60)}. The ${pick(WORDS)} is confusing. I love the ${pick(WORDS)}.`,
      })),
    });
    users.push({ token: t, entityId: entity.id as string });
  }
  const greedy = await token(`load-greedy-${randomUUID()}`);
  const created = await call(base, greedy, "POST", "/api/user/keys", { name: "greedy", scopes: ["*"] });
  return { users, greedyKey: created.raw_key as string };
}

export interface Workload {
  name: string;
  /** Statuses that are not errors for this workload. */
  expected: number[];
  options: autocannon.Options;
}

type Req = autocannon.Request;

function asUser(users: User[], build: (user: User) => { path?: string; body?: unknown }) {
  return (req: Req): Req => {
    const user = pick(users);
    const { path, body } = build(user);
    return {
      ...req,
      ...(path ? { path } : {}),
      headers: { ...(req.headers ?? {}), authorization: `Bearer ${user.token}`, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    };
  };
}

export function workloads(base: string, seeded: Seeded, seconds: number): Workload[] {
  const { users } = seeded;
  const common = { url: base, duration: seconds } satisfies Partial<autocannon.Options>;
  return [
    {
      name: "ingest (10 sources/batch)",
      expected: [200],
      options: {
        ...common,
        connections: 4,
        requests: [
          {
            method: "POST",
            path: "/agent/v1/ingest/content",
            setupRequest: asUser(users, (user) => ({
              body: {
                entity_id: user.entityId,
                sources: Array.from({ length: 10 }, () => {
                  const n = next();
                  return {
                    id: `load-${n}`,
                    platform: "web",
                    url: `https://example.com/load/${n}`,
                    title: sentence(5),
                    content: `${sentence(80)}. The ${pick(WORDS)} is slow.`,
                  };
                }),
              },
            })),
          },
        ],
      },
    },
    {
      name: "search",
      expected: [200],
      options: {
        ...common,
        connections: 6,
        requests: [
          {
            method: "POST",
            path: "/agent/v1/search",
            setupRequest: asUser(users, () => ({ body: { query: `${pick(WORDS)} ${pick(WORDS)}`, limit: 20 } })),
          },
        ],
      },
    },
    {
      name: "recall",
      expected: [200],
      options: {
        ...common,
        connections: 6,
        requests: [
          {
            method: "GET",
            path: "/agent/v1/context/recall",
            setupRequest: asUser(users, () => ({
              path: `/agent/v1/context/recall?query=${encodeURIComponent(`${pick(WORDS)} ${pick(WORDS)}`)}&limit=10`,
            })),
          },
        ],
      },
    },
    {
      name: "analysis streams (to the result event)",
      expected: [200],
      options: {
        ...common,
        connections: 3,
        timeout: 120,
        requests: [
          {
            method: "POST",
            path: "/agent/v1/analysis/run",
            setupRequest: asUser(users, (user) => ({
              body: { question: `What do people say about the ${pick(WORDS)}?`, entity_id: user.entityId },
            })),
          },
        ],
      },
    },
    {
      name: "collection job creation",
      expected: [200],
      options: {
        ...common,
        connections: 2,
        overallRate: 5,
        requests: [
          {
            method: "POST",
            path: "/agent/v1/ingest/collection/jobs",
            setupRequest: asUser(users, (user) => ({
              body: {
                entity_id: user.entityId,
                objective: `What do people say about the ${pick(WORDS)}?`,
                collection_only: true,
                platforms: ["hackernews"],
                idempotency_key: `load-${randomUUID()}`,
              },
            })),
          },
        ],
      },
    },
    {
      name: "one API key over its rate limit (deliberate 429s)",
      expected: [200, 429],
      options: {
        ...common,
        // 40/s is twice the limit the bench sets (1,200 a minute); four connections reach it even
        // when a request takes 100 ms, so every one-minute window goes over whatever the alignment.
        connections: 4,
        overallRate: 40,
        requests: [{ method: "GET", path: "/api/entities", headers: { "x-api-key": seeded.greedyKey } }],
      },
    },
  ];
}
