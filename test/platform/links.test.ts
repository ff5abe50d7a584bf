import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bound } from "../../src/intake/collection/collectors/types.js";
import { noteSource } from "../../src/intake/notes/mapping.js";
import type { Note } from "../../src/intake/notes/provider.js";
import { bearer, createEntityFor } from "../helpers/evidence.js";
import { createHarness, type Harness } from "../helpers/harness.js";

/**
 * Every field that stores a link takes "" or an absolute http(s) URL: any other scheme is
 * a 422 at the field, however it is disguised, and search never answers one as a link.
 */
let h: Harness;
let token: string;
let entity: { id: string; workspace_id: string };

beforeAll(async () => {
  h = await createHarness();
  token = await h.token();
  entity = await createEntityFor(h, token, { url: "https://acme.example.com" });
});
afterAll(() => h.close());

const SCHEMES = [
  "javascript:alert(1)",
  "JavaScript:alert(document.cookie)",
  " javascript:alert(1)",
  "java\tscript:alert(1)",
  "java\nscript:alert(1)",
  "data:text/html,<script>alert(1)</script>",
  "vbscript:msgbox(1)",
  "file:///etc/passwd",
  "mailto:someone@example.com",
  "ftp://files.example.com/a",
];
const UNPARSEABLE = ["not a url", "//example.com/no-scheme", "http://", "/relative/path"];

interface LinkField {
  name: string;
  send: (url: string) => Promise<{ status: number; body: { detail?: { loc: unknown[]; type: string }[] } }>;
  loc: (string | number)[];
  /** Whether "" (no link) is accepted. */
  empty: boolean;
}

const post = (path: string, body: object) => h.http.post(path).set(bearer(token)).send(body);
let n = 0;
const source = (extra: Record<string, unknown>) => ({ platform: "web", content: `link test ${++n}`, ...extra });

const FIELDS: LinkField[] = [
  {
    name: "ingest source url",
    send: (url) => post("/agent/v1/ingest/content", { entity_id: entity.id, sources: [source({ url })] }),
    loc: ["body", "sources", 0, "url"],
    empty: true,
  },
  {
    name: "ingest comment url",
    send: (url) => post("/agent/v1/ingest/content", { entity_id: entity.id, sources: [source({ comments: [{ text: `c ${++n}`, url }] })] }),
    loc: ["body", "sources", 0, "comments", 0, "url"],
    empty: true,
  },
  {
    name: "entity url (create)",
    send: (url) => post("/api/entities", { name: `Linked ${++n}`, url }),
    loc: ["body", "url"],
    empty: true,
  },
  {
    name: "entity url (update)",
    send: (url) => h.http.patch(`/api/entities/${entity.id}`).set(bearer(token)).send({ url }),
    loc: ["body", "url"],
    empty: true,
  },
  {
    name: "onboarding company url",
    send: (url) => post("/api/entities/onboarding", { request_id: randomUUID(), company: { name: `Onboarded ${++n}`, url } }),
    loc: ["body", "company", "url"],
    empty: true,
  },
  {
    name: "onboarding document destination url",
    send: (url) =>
      post("/api/entities/onboarding", {
        request_id: randomUUID(),
        company: { name: `Onboarded ${++n}` },
        research_objectives: [{ title: "Churn", workflow: { document_destination: { url } } }],
      }),
    loc: ["body", "research_objectives", 0, "workflow", "document_destination", "url"],
    empty: true,
  },
];

describe("link fields", () => {
  it("refuse every scheme but http and https with a 422 at the field", async () => {
    for (const field of FIELDS) {
      for (const url of SCHEMES) {
        const res = await field.send(url);
        const where = `${field.name} ${JSON.stringify(url)}`;
        expect(res.status, `${where}: ${JSON.stringify(res.body)}`).toBe(422);
        expect(res.body.detail, where).toEqual([expect.objectContaining({ loc: field.loc, type: "url_scheme" })]);
      }
      for (const url of UNPARSEABLE) {
        const res = await field.send(url);
        expect(res.status, `${field.name} ${url}`).toBe(422);
        expect(res.body.detail, `${field.name} ${url}`).toEqual([expect.objectContaining({ loc: field.loc, type: "url_parsing" })]);
      }
    }
  });

  it("take http(s) URLs and, where a link is optional, the empty string", async () => {
    for (const field of FIELDS) {
      for (const url of ["https://example.com/a?b=1#c", "HTTP://EXAMPLE.COM/upper", ...(field.empty ? [""] : [])]) {
        const res = await field.send(url);
        expect([200, 201], `${field.name} ${JSON.stringify(url)}: ${JSON.stringify(res.body)}`).toContain(res.status);
      }
    }
  });

  it("are never answered by search as anything but an http(s) link, even for rows stored before the rule", async () => {
    const row = await h.deps.db.content.create({
      data: {
        workspaceId: entity.workspace_id,
        entityId: entity.id,
        platform: "web",
        url: "javascript:alert(1)",
        title: "Legacy row",
        content: "A legacy zeppelin review stored long ago.",
        dedupKey: "legacy-zeppelin",
        contentHash: "legacy-zeppelin",
      },
    });
    const res = await post("/agent/v1/search", { query: "zeppelin" });
    expect(res.status).toBe(200);
    const hit = (res.body.results as { content_id: string; url: string }[]).find((r) => r.content_id === row?.id);
    expect(hit?.url).toBe("");
  });
});

describe("links from upstreams", () => {
  it("keep http(s) URLs and drop any other scheme, keeping the item", () => {
    expect(bound.url("https://news.example.com/item?id=1")).toBe("https://news.example.com/item?id=1");
    expect(bound.url("javascript:alert(1)")).toBe("");
    expect(bound.url("data:text/html,x")).toBe("");
    const note = { id: "not_1234567890abcd", title: "Weekly", created_at: "2026-01-02T03:04:05Z", web_url: "javascript:alert(1)" } as Note;
    expect(noteSource(note, false).url).toBe("");
    expect(noteSource({ ...note, web_url: "https://notes.example.com/n/1" } as Note, false).url).toBe("https://notes.example.com/n/1");
  });
});
