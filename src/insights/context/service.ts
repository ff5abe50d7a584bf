import { projectForUser } from "../../access/workspaces/access.js";
import { jobIds } from "../../jobs/ids.js";
import type { Db } from "../../platform/db.js";
import { AppError } from "../../platform/errors.js";
import type { Logger } from "../../platform/logger.js";
import type { Queues } from "../../platform/queues.js";
import type { EmbeddingProvider } from "../embed/provider.js";
import { tryEmbedPage } from "./embedding.js";
import { fuseRankings } from "./fusion.js";
import { slugFromTitle } from "./paths.js";
import { type KeywordQuery, keywordRanking, type ResultRow, resultRows, upsertPage } from "./repo.js";
import type { RecallInput, RecallResponse, RecallResult, SavedPage, SaveInput } from "./schemas.js";
import type { CommonTerms } from "./terms.js";
import type { PageVectorRanker } from "./vectors.js";

/**
 * Saved context pages. Glossary: a *page* is a titled text a user keeps at a stable
 * *path* of their own; *recall* finds the user's pages for a query by fusing a keyword
 * ranking (PostgreSQL full text) with a vector ranking (embedding cosine).
 */
export interface ContextServices {
  db: Db;
  queues: Queues;
  logger: Logger;
  embedder: EmbeddingProvider;
  ranker: PageVectorRanker;
  terms: CommonTerms;
  /** Cosine similarity below which the vector ranking ignores a page. */
  minSimilarity: number;
}

/** How many candidates each ranking contributes to the fusion. */
export const CANDIDATE_DEPTH = 50;
export const SNIPPET_CHARS = 280;

export async function savePage(svc: ContextServices, userId: string, input: SaveInput): Promise<SavedPage> {
  if (input.project_id) await projectForUser(svc.db, userId, input.project_id);
  const path = input.path ?? slugFromTitle(input.title);
  const embedding = await tryEmbedPage(svc.embedder, input.title, input.content);
  const write = {
    userId,
    projectId: input.project_id ?? null,
    path,
    title: input.title,
    content: input.content,
    tags: input.tags,
    embedding,
    embeddingModel: embedding ? svc.embedder.model : null,
  };
  // Without a vector, the page and its embedding job commit together or not at all.
  const row = embedding
    ? await upsertPage(svc.db, write)
    : await svc.db.$transaction(async (tx) => {
        const saved = await upsertPage(tx, write);
        await svc.queues.enqueue("context.embed.v1", { pageId: saved.id }, { jobId: jobIds.pageEmbed(saved.id, saved.version) });
        return saved;
      });
  if (!embedding) svc.logger.warn({ pageId: row.id }, "page saved without embedding; embedding job queued");
  return {
    id: row.id,
    path: row.path,
    title: row.title,
    tags: row.tags,
    project_id: row.project_id,
    created: row.version === 1,
    version: row.version,
    updated_at: row.updated_at.toISOString(),
    embedding: row.embedded ? "ready" : "pending",
  };
}

const WEB_SEARCH_SYNTAX = /["]|(^|\s)-\S|(^|\s)or(\s|$)/iu;

/**
 * The query as `websearch_to_tsquery` inputs. A query written in web-search syntax
 * (quotes, `or`, `-word`) is taken as written. Otherwise a page is a candidate when it
 * holds any of the informative words (joined with `or`, see terms.ts), and pages holding
 * all the words as given rank first.
 */
export async function keywordQuery(terms: CommonTerms, query: string): Promise<KeywordQuery> {
  if (WEB_SEARCH_SYNTAX.test(query)) return { all: query, any: query };
  const words = query.split(/\s+/u).filter(Boolean);
  return { all: query, any: (await terms.informative(words)).join(" or ") };
}

export async function recallPages(svc: ContextServices, userId: string, input: RecallInput): Promise<RecallResponse> {
  if (input.project_id) await projectForUser(svc.db, userId, input.project_id);
  const keywords = await keywordQuery(svc.terms, input.query);
  const [keyword, vector] = await Promise.all([
    keywordRanking(svc.db, userId, keywords, input.project_id, CANDIDATE_DEPTH),
    vectorRanking(svc, userId, input),
  ]);
  if (vector instanceof AppError) {
    // The embeddings provider failed: keyword matches still answer; nothing at all is not a success.
    if (keyword.length === 0) throw vector;
    svc.logger.warn({ err: vector.message }, "recall without vector ranking: embeddings provider failed");
  }
  const fused = fuseRankings([keyword, vector instanceof AppError ? [] : vector]).slice(0, input.limit);
  const found = await resultRows(
    svc.db,
    userId,
    fused.map((f) => f.id),
    keywords.any,
  );
  const rows = new Map(found.map((r) => [r.id, r]));
  const results: RecallResult[] = [];
  for (const f of fused) {
    const row = rows.get(f.id);
    if (!row) continue; // deleted since it was ranked
    results.push({
      path: row.path,
      title: row.title,
      snippet: snippetOf(row),
      score: Math.round(f.score * 1e6) / 1e6,
      tags: row.tags,
      project_id: row.project_id,
      updated_at: row.updated_at.toISOString(),
    });
  }
  return { results, count: results.length, query: input.query };
}

async function vectorRanking(svc: ContextServices, userId: string, input: RecallInput): Promise<string[] | AppError> {
  let query: number[] | undefined;
  try {
    [query] = await svc.embedder.embed([input.query]);
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  if (!query) return [];
  const matches = await svc.ranker.rank(userId, query, {
    model: svc.embedder.model,
    projectId: input.project_id,
    limit: CANDIDATE_DEPTH,
    minSimilarity: svc.minSimilarity,
  });
  return matches.map((m) => m.id);
}

const collapse = (text: string) => text.replace(/\s+/gu, " ").trim();

/** The highlighted passages where the query matched, else the start of the page. */
function snippetOf(row: ResultRow): string {
  const headline = row.headline ? collapse(row.headline) : "";
  if (headline.includes("**")) return headline;
  const head = collapse(row.head);
  if (head.length <= SNIPPET_CHARS) return head;
  const cut = head.slice(0, SNIPPET_CHARS);
  const space = cut.lastIndexOf(" ");
  return `${space > SNIPPET_CHARS / 2 ? cut.slice(0, space) : cut}…`;
}
