import { hash } from "node:crypto";

/**
 * Dedup keys (DESIGN.md §3). Within an entity a source is identified by
 * (platform, external id) when it has an id, else (platform, normalised url) when it has
 * a url, else (platform, sha256 of its content). A comment is identified the same way
 * under its parent's key. Keys are stored as a fixed-length digest, so the unique index
 * on (entity_id, dedup_key) never meets an over-long value.
 */
export const sha256 = (text: string) => hash("sha256", text, "hex");

const TRACKING_PARAMS = new Set(["fbclid", "gclid", "dclid", "msclkid", "mc_cid", "mc_eid", "igshid", "ref_src", "_hsenc", "_hsmi"]);

/**
 * A URL in the form two spellings of the same page share: http and https alike, lower-case
 * host without `www.` or default port, no tracking parameters (utm_*, fbclid, ...), the
 * remaining query parameters sorted, no fragment (unless it is a `#!` / `#/` route), no
 * trailing slash. Anything that does not parse as an absolute URL is only trimmed.
 */
export function normaliseUrl(raw: string): string {
  const trimmed = raw.trim();
  let url: URL;
  try {
    url = new URL(trimmed);
  } catch {
    return trimmed;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return url.href;
  const host = url.hostname.replace(/^www\./, "");
  const params = [...url.searchParams.entries()]
    .filter(([name]) => !name.toLowerCase().startsWith("utm_") && !TRACKING_PARAMS.has(name.toLowerCase()))
    .sort(([a, av], [b, bv]) => (a === b ? (av < bv ? -1 : av > bv ? 1 : 0) : a < b ? -1 : 1));
  const query = params.length > 0 ? `?${new URLSearchParams(params).toString()}` : "";
  let path = url.pathname;
  if (path.length > 1) path = path.replace(/\/+$/, "") || "/";
  const fragment = url.hash.startsWith("#!") || url.hash.startsWith("#/") ? url.hash : "";
  const port = url.port ? `:${url.port}` : "";
  const auth = url.username ? `${url.username}${url.password ? `:${url.password}` : ""}@` : "";
  return `//${auth}${host}${port}${path === "/" ? "" : path}${query}${fragment}`;
}

type Identity = { id?: string | undefined; url?: string | undefined; body: string };

function identity(item: Identity): string {
  const id = item.id?.trim();
  if (id) return `id\u0000${id}`;
  const url = item.url?.trim();
  if (url) return `url\u0000${normaliseUrl(url)}`;
  return `sha256\u0000${sha256(item.body)}`;
}

export function sourceDedupKey(platform: string, item: Identity): string {
  return `s:${sha256(`${platform}\u0000${identity(item)}`)}`;
}

export function commentDedupKey(parentKey: string, item: Identity): string {
  return `c:${sha256(`${parentKey}\u0000${identity(item)}`)}`;
}

/**
 * PostgreSQL text cannot hold NUL, and JSON cannot carry unpaired surrogates into it:
 * drop NULs and replace unpaired surrogates with U+FFFD, in strings and nested values.
 */
export function storableText(value: string): string {
  const out = value.includes("\u0000") ? value.replaceAll("\u0000", "") : value;
  return out.isWellFormed() ? out : out.toWellFormed();
}

export function storableJson(value: unknown): unknown {
  if (typeof value === "string") return storableText(value);
  if (Array.isArray(value)) return value.map(storableJson);
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [storableText(k), storableJson(v)]));
  }
  return value;
}
