import { z } from "zod";

/**
 * Links: every field that stores a URL a client may later follow (a source's or comment's
 * `url`, an entity's `url`, onboarding's company, product, competitor and document
 * destination URLs) holds an absolute `http`/`https` URL with a host, or "" for none.
 * Other schemes (`javascript:`, `data:`, `file:`, …) are refused at the field, so nothing
 * the service answers with can run script when a client renders it as a link. The value
 * is read with the WHATWG URL parser, as a browser reads it (so `java\tscript:` or
 * ` javascript:` are seen for what they are), and stored as sent.
 */
export type LinkProblem = "parsing" | "scheme";

export function readLink(value: string): LinkProblem | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return "parsing";
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return "scheme";
  return url.hostname.length > 0 ? undefined : "parsing";
}

/** True for "" (no link) and for an absolute http(s) URL with a host. */
export const isLinkOrEmpty = (value: string): boolean => value === "" || readLink(value) === undefined;

/** A link from an upstream (collector, notes provider): kept when it is one, else "". */
export const linkOrEmpty = (value: string | null | undefined): string => (value && isLinkOrEmpty(value) ? value : "");

const PROBLEMS: Record<LinkProblem, { message: string; type: string }> = {
  parsing: { message: "Input should be a valid absolute http(s) URL", type: "url_parsing" },
  scheme: { message: "URL scheme should be 'http' or 'https'", type: "url_scheme" },
};

/** A link field: "" or an http(s) URL of at most `max` characters (`trim`: surrounding spaces dropped first). */
export function linkUrl(options: { max: number; trim?: boolean }) {
  const base = options.trim ? z.string().trim().max(options.max, { abort: true }) : z.string().max(options.max, { abort: true });
  return base.superRefine((value, ctx) => {
    if (value === "") return;
    const problem = readLink(value);
    if (problem) ctx.addIssue({ code: "custom", message: PROBLEMS[problem].message, params: { type: PROBLEMS[problem].type } });
  });
}
