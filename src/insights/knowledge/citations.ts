import type { QuoteCandidate } from "../analysis/evidence.js";
import { verifyQuotes } from "../analysis/load.js";

/**
 * A citation's quote may be as short as one character that is not white space: an agent
 * cites exactly what supports its finding ("slow"), checked verbatim at its offset.
 */
const MIN_CITATION_CHARS = 1;

import type { Db, DbTx } from "../../platform/db.js";
import type { ValidationIssue } from "../../platform/errors.js";
import { codePointLength } from "../../platform/text.js";
import { locateQuote } from "./quotes.js";
import type { EvidenceInput, Relation } from "./schemas.js";
import { LIMITS } from "./schemas.js";
import type { KnowledgeScope } from "./scope.js";
import { allowedRelations, type CaptureOutcome, captureSources, isAvailable, loadSnapshots, type Snapshot } from "./sources.js";

/**
 * Checks the citations of a write and pins each to a snapshot. Citing a `content_id`
 * captures the original's current text; citing a `source_revision_id` reuses a snapshot
 * of the scope. Every quote must be an exact substring of its snapshot's text (at `start`
 * when given), and a snapshot of an interpretation may only be cited as `context`. Any
 * failure is a 422 naming the citation's field; the caller's transaction then rolls back,
 * so nothing (not even a snapshot) is saved.
 */
export interface Citation {
  position: number;
  snapshot: Snapshot;
  quote: string;
  relation: Relation;
  start: number;
  end: number;
}

type Loc = (string | number)[];

/**
 * The service's quote gate (`verifyQuotes`, the same one analyses pass) over the originals
 * cited by id: stored, in the scope's workspace, quotable, verbatim. Run before the write's
 * transaction; rows that interpret (`not_quotable`) are left to the snapshot check, which
 * admits them as context.
 */
export async function gateQuotes(db: Db, scope: KnowledgeScope, evidence: EvidenceInput[], at: Loc): Promise<ValidationIssue[]> {
  const candidates: { index: number; candidate: QuoteCandidate }[] = [];
  evidence.forEach((e, index) => {
    if (e.source_revision_id !== undefined || e.content_id === undefined) return;
    const start = e.start ?? null;
    candidates.push({
      index,
      candidate: {
        content_id: e.content_id,
        quote: e.quote,
        start_offset: start,
        end_offset: start === null ? null : start + codePointLength(e.quote),
      },
    });
  });
  if (candidates.length === 0) return [];
  const { dropped } = await verifyQuotes(
    db,
    candidates.map((c) => c.candidate),
    { workspaceIds: [scope.workspaceId], minQuoteChars: MIN_CITATION_CHARS },
  );
  const issues: ValidationIssue[] = [];
  for (const { index, candidate } of candidates) {
    const reason = dropped.find((d) => d.candidate === candidate)?.reason;
    if (reason === undefined || reason === "not_quotable") continue;
    issues.push(
      reason === "empty"
        ? quoteTooShort([...at, index, "quote"])
        : reason === "not_verbatim"
          ? notVerbatim([...at, index, "quote"], undefined)
          : sourceNotFound([...at, index, "content_id"]),
    );
  }
  return issues;
}

const sourceNotFound = (loc: Loc): ValidationIssue => ({
  loc,
  msg: "No original with this id is in the scope (the entity, or the project's entities)",
  type: "source_not_found",
});
const quoteTooShort = (loc: Loc): ValidationIssue => ({
  loc,
  msg: "A quote must hold at least one character that is not white space",
  type: "quote_too_short",
});
const notVerbatim = (loc: Loc, start: number | undefined): ValidationIssue => ({
  loc,
  msg:
    start === undefined
      ? "The quote is not an exact substring of the source's captured text"
      : `The quote is not an exact substring of the source's captured text at code point ${start}`,
  type: "quote_not_verbatim",
});

/** Resolves and checks every citation inside the write's transaction. */
export async function pinCitations(
  tx: DbTx,
  entityIds: string[],
  evidence: EvidenceInput[],
  at: Loc,
): Promise<{ citations: Citation[]; issues: ValidationIssue[] }> {
  const byRevision = await loadSnapshots(
    tx,
    evidence.flatMap((e) => (e.source_revision_id === undefined ? [] : [e.source_revision_id])),
  );
  const captured: Map<string, CaptureOutcome> = await captureSources(
    tx,
    entityIds,
    evidence.flatMap((e) => (e.source_revision_id === undefined && e.content_id !== undefined ? [e.content_id] : [])),
  );
  const issues: ValidationIssue[] = [];
  const citations: Citation[] = [];
  evidence.forEach((e, index) => {
    const here = (field: string): Loc => [...at, index, field];
    let snapshot: Snapshot | undefined;
    if (e.source_revision_id !== undefined) {
      const found = byRevision.get(e.source_revision_id);
      if (!found || !entityIds.includes(found.entityId)) {
        issues.push({ loc: here("source_revision_id"), msg: "No source revision with this id is in the scope", type: "source_not_found" });
        return;
      }
      if (e.content_id !== undefined && e.content_id !== found.originalId) {
        issues.push({ loc: here("content_id"), msg: "The source revision is a snapshot of another original", type: "source_mismatch" });
        return;
      }
      if (!isAvailable(found)) {
        issues.push({
          loc: here("source_revision_id"),
          msg: "The original of this source revision was deleted; its text is no longer available",
          type: "source_unavailable",
        });
        return;
      }
      snapshot = found;
    } else {
      const outcome = captured.get(e.content_id ?? "");
      if (!outcome?.ok) {
        issues.push(
          outcome?.reason === "too_large"
            ? {
                loc: here("content_id"),
                msg: `The original has ${outcome.length} characters; at most ${LIMITS.sourceChars} can be captured`,
                type: "source_too_large",
              }
            : sourceNotFound(here("content_id")),
        );
        return;
      }
      snapshot = outcome.snapshot;
    }
    if (e.quote.trim().length < MIN_CITATION_CHARS) {
      issues.push(quoteTooShort(here("quote")));
      return;
    }
    const span = locateQuote(snapshot.text ?? "", e.quote, e.start);
    if (!span) {
      issues.push(notVerbatim(here("quote"), e.start));
      return;
    }
    if (!allowedRelations(snapshot.textKind).includes(e.relation)) {
      issues.push({
        loc: here("relation"),
        msg: `The source is an interpretation (${snapshot.rowKind === "summary" ? "a summary" : "a description of its material, not the material"}); it may only be cited as context`,
        type: "relation_not_allowed",
      });
      return;
    }
    citations.push({ position: index, snapshot, quote: e.quote, relation: e.relation, start: span.start, end: span.end });
  });
  return { citations, issues };
}
