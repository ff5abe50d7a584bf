import express, { type NextFunction, type Request, type Response, type Router } from "express";
import { relayAnalysis } from "../../insights/analysis/relay.js";
import { readSourcesCursor, SOURCE_SORTS, type SourceSort } from "../../insights/analysis/theme-sources-schemas.js";
import type { AppDeps } from "../../platform/deps.js";
import { AppError } from "../../platform/errors.js";
import { createWindowCounter } from "../../platform/rate-limit.js";
import { parseLastEventId } from "../../platform/sse.js";
import { openShareLink, SHARE_PATH, type ShareLinkRow } from "./links.js";
import {
  LIVE_SCRIPT,
  LIVE_SCRIPT_HASH,
  LIVE_SCRIPT_PATH,
  renderAnalysisPage,
  renderEntityPage,
  renderKnowledgePage,
  renderNotFoundPage,
  renderThemeSourcesPage,
  renderTooManyRequestsPage,
  STYLESHEET,
  STYLESHEET_HASH,
  STYLESHEET_PATH,
} from "./pages/index.js";
import { analysisPage, entityPage, knowledgePage, sharedAnalysisId, themeSourcesPage } from "./views.js";

/**
 * The pages share links open (`/share/{token}`), their event stream and their two assets. Pages are
 * HTML rendered on the server with a strict CSP (our own stylesheet and script only, nothing
 * inline, no third-party origin), not indexed, not cached (a revoked link stops at once) and sent
 * with `Referrer-Policy: no-referrer`, so following a link to an original does not hand the token
 * to its site. An unknown, altered, expired or revoked token, and one whose resource is gone, is
 * the same plain 404 page.
 */
const PAGE_CSP = [
  "default-src 'none'",
  "style-src 'self'",
  "script-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

const PAGE_HEADERS = {
  "Content-Type": "text/html; charset=utf-8",
  "Content-Security-Policy": PAGE_CSP,
  "Referrer-Policy": "no-referrer",
  "X-Robots-Tag": "noindex, nofollow, noarchive",
  "Cache-Control": "no-store",
};

/** The methods a page and its event stream answer. */
const READ_ONLY = "GET, HEAD";

type Render = (deps: AppDeps, link: ShareLinkRow, token: string) => Promise<string | null>;

const RENDERERS: Record<string, Render> = {
  analysis: async (deps, link, token) => {
    const model = await analysisPage(deps.db, link, token);
    return model && renderAnalysisPage(model);
  },
  knowledge_record: async (deps, link) => {
    const model = await knowledgePage(deps.db, link);
    return model && renderKnowledgePage(model);
  },
  entity: async (deps, link) => {
    const model = await entityPage(deps.db, link);
    return model && renderEntityPage(model);
  },
};

function sendPage(res: Response, status: number, body: string, started: bigint) {
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  res
    .status(status)
    .set(PAGE_HEADERS)
    .set("Server-Timing", `render;dur=${ms.toFixed(1)}`)
    .send(body);
}

/** An asset under its content hash (the one its `?v=` carries) as ETag. */
function asset(body: string, hash: string, contentType: string) {
  const etag = `"${hash}"`;
  return (req: Request, res: Response) => {
    // A versioned URL (`?v=` of the content's hash) never changes; a bare one is revalidated.
    const immutable = typeof req.query.v === "string";
    res.set({
      "Content-Type": contentType,
      ETag: etag,
      "Cache-Control": immutable ? "public, max-age=31536000, immutable" : "public, max-age=300",
      "X-Content-Type-Options": "nosniff",
    });
    if (req.headers["if-none-match"] === etag) res.status(304).end();
    else res.send(body);
  };
}

/**
 * What a theme page's address asks for: the insight's number, the order and the page (a cursor its own
 * links carry). Anything else (another parameter form, a cursor no list handed out) is no page: null.
 */
function themeRequest(rawN: string, query: Request["query"]) {
  if (!/^[1-9]\d{0,5}$/.test(rawN)) return null;
  const sort = query.sort ?? "representative";
  if (typeof sort !== "string" || !(SOURCE_SORTS as readonly string[]).includes(sort)) return null;
  const raw = query.cursor;
  if (raw !== undefined && typeof raw !== "string") return null;
  const value = raw === undefined ? null : readSourcesCursor(raw);
  if (raw !== undefined && value === null) return null;
  return { n: Number(rawN), sort: sort as SourceSort, cursor: raw !== undefined && value ? { raw, value } : null };
}

export function sharePages(deps: AppDeps): Router {
  const router = express.Router();
  // Pages and their event streams answer without signing in, so each client address has a budget of its
  // own (SHARE_PAGES_PER_MINUTE); assets are cached by the browser and not counted.
  const count = createWindowCounter(deps.redis, deps.config.REDIS_PREFIX, deps.logger);
  const limited = async (req: Request, res: Response): Promise<boolean> => {
    const retryAfter = await count(`share:${req.ip ?? "unknown"}`, deps.config.SHARE_PAGES_PER_MINUTE);
    if (retryAfter === null) return false;
    res.set("Retry-After", String(retryAfter));
    sendPage(res, 429, renderTooManyRequestsPage(retryAfter), process.hrtime.bigint());
    return true;
  };
  router.get(STYLESHEET_PATH, asset(STYLESHEET, STYLESHEET_HASH, "text/css; charset=utf-8"));
  router.get(LIVE_SCRIPT_PATH, asset(LIVE_SCRIPT, LIVE_SCRIPT_HASH, "text/javascript; charset=utf-8"));
  // Browsers ask for an icon with every page; the service has none, and says so without an error.
  router.get("/favicon.ico", (_req: Request, res: Response) => {
    res.set("Cache-Control", "public, max-age=86400").status(204).end();
  });

  router.get(`${SHARE_PATH}/:token`, async (req: Request, res: Response) => {
    const started = process.hrtime.bigint();
    res.locals.routeTemplate = `${SHARE_PATH}/:token`;
    if (await limited(req, res)) return;
    const token = String(req.params.token);
    const link = await openShareLink(deps.db, token);
    const page = link ? await RENDERERS[link.resourceKind]?.(deps, link, token) : null;
    if (page) sendPage(res, 200, page, started);
    else sendPage(res, 404, renderNotFoundPage(), started);
  });

  // One theme of a shared analysis with its sources, a page at a time (`?sort=newest`, `?cursor=` from its
  // own links). Only the link's analysis: the path names a theme of it by number, nothing else.
  router.get(`${SHARE_PATH}/:token/insights/:n`, async (req: Request, res: Response) => {
    const started = process.hrtime.bigint();
    res.locals.routeTemplate = `${SHARE_PATH}/:token/insights/:n`;
    if (await limited(req, res)) return;
    const request = themeRequest(String(req.params.n), req.query);
    const token = String(req.params.token);
    const link = request ? await openShareLink(deps.db, token) : null;
    const model = link && request ? await themeSourcesPage(deps.db, link, token, request) : null;
    if (model) sendPage(res, 200, renderThemeSourcesPage(model), started);
    else sendPage(res, 404, renderNotFoundPage(), started);
  });

  router.get(`${SHARE_PATH}/:token/events`, async (req: Request, res: Response) => {
    res.locals.routeTemplate = `${SHARE_PATH}/:token/events`;
    if (await limited(req, res)) return;
    const token = String(req.params.token);
    const link = await openShareLink(deps.db, token);
    const analysisId = link ? await sharedAnalysisId(deps.db, link) : null;
    if (!analysisId) {
      sendPage(res, 404, renderNotFoundPage(), process.hrtime.bigint());
      return;
    }
    const afterSeq = parseLastEventId(req.headers["last-event-id"]);
    await relayAnalysis(deps, res, analysisId, {
      afterSeq,
      headers: { "Referrer-Policy": "no-referrer", "X-Robots-Tag": "noindex", "Cache-Control": "no-store" },
    });
  });

  // Pages, their streams and their assets are read-only: any other method is the API's 405 (with `Allow`),
  // answered here, before the body rules further on could judge a body the method never takes.
  const readOnly = [
    `${SHARE_PATH}/:token`,
    `${SHARE_PATH}/:token/events`,
    `${SHARE_PATH}/:token/insights/:n`,
    STYLESHEET_PATH,
    LIVE_SCRIPT_PATH,
    "/favicon.ico",
  ];
  router.all(readOnly, (req: Request, _res: Response, next: NextFunction) => {
    next(
      new AppError("method_not_allowed", `${req.method} is not allowed on ${req.path}; allowed: ${READ_ONLY}.`, {
        headers: { Allow: READ_ONLY },
      }),
    );
  });
  return router;
}
