import { entityForUser, projectForUser, requireWriter } from "../../access/workspaces/access.js";
import { jobIds } from "../../jobs/ids.js";
import { canonicalJson } from "../../platform/canonical.js";
import { readInstant } from "../../platform/dates.js";
import type { Db } from "../../platform/db.js";
import type { AppDeps } from "../../platform/deps.js";
import { ValidationFailed, type ValidationIssue } from "../../platform/errors.js";
import { linkOrEmpty } from "../../platform/links.js";
import { clipCodePoints, codePointLength } from "../../platform/text.js";
import { PLATFORMS } from "../../platform/vocabulary.js";
import { sha256, storableJson, storableText } from "../ingest/dedup.js";
import { erasedAuthors } from "../ingest/erased-authors.js";
import type { PlannedRow } from "../ingest/plan.js";
import { insertRows } from "../ingest/sql.js";
import { OBSERVATION_COUNT_BASIS, type ObservationItem, type SubmitObservationsInput, type SubmitObservationsResponse } from "./schemas.js";

/**
 * Saving observations: each is a source row of an entity in one workspace, written with the
 * ingest service's set-based insert in one transaction (every observation, or none), then queued
 * for enrichment like any ingested original.
 *
 * - Entity of an item: its own `entity_id`, else the request's, else the project's company (its
 *   oldest company entity, else its oldest entity). Every entity must be visible (404) and in the
 *   project's workspace, or, without a project, in the first item's (422 at the field otherwise).
 * - Identity: a snapshot is identified within its entity by (platform, source_id or the content's
 *   hash, and the hash of its content, metadata, observation_type and signal_type). An identical
 *   retry finds the same rows; changed text or metadata for the same source_id is a new row whose
 *   `snapshot_of` names the source's first snapshot.
 * - Platform: `source_platform` when it is a platform of the service (`granola` reads as
 *   `meetingnotes`), else `agent`; the value sent is kept in `metadata.observation.source_platform`.
 */
export type ObservationDeps = Pick<AppDeps, "db" | "queues" | "logger" | "config">;

type EntityRow = Awaited<ReturnType<typeof entityForUser>>;

const KNOWN_PLATFORMS = new Set<string>(PLATFORMS);
export function platformOf(sourcePlatform: string): string {
  const value = sourcePlatform.trim().toLowerCase();
  if (value === "granola") return "meetingnotes";
  return KNOWN_PLATFORMS.has(value) ? value : "agent";
}

const stringField = (metadata: Record<string, unknown>, key: string): string | undefined => {
  const value = metadata[key];
  return typeof value === "string" ? value : undefined;
};

/** A link the ingest would store (an http(s) URL of at most 5000 characters), else none. */
function linkOf(value: string | undefined): string {
  const link = linkOrEmpty(value);
  return codePointLength(link) <= 5000 ? link : "";
}

function publishedAt(metadata: Record<string, unknown>): string | null {
  const raw = stringField(metadata, "published_at");
  if (!raw) return null;
  const read = readInstant(raw);
  return read instanceof Date ? read.toISOString() : null;
}

interface ResolvedItem {
  index: number;
  item: ObservationItem;
  entity: EntityRow;
  platform: string;
  row: PlannedRow;
}

/** The project's own entity: its oldest company, else its oldest entity. */
async function projectEntity(db: Db, projectId: string, workspaceId: string): Promise<EntityRow | null> {
  const rows = await db.entity.findMany({
    where: { projectId, workspaceId },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
  });
  return rows.find((e) => e.kind === "company") ?? rows[0] ?? null;
}

async function resolveEntities(db: Db, userId: string, input: SubmitObservationsInput) {
  const project = input.project_id === undefined ? null : await projectForUser(db, userId, input.project_id);
  const cache = new Map<string, EntityRow>();
  const visible = async (id: string) => {
    let entity = cache.get(id);
    if (!entity) {
      entity = await entityForUser(db, userId, id);
      cache.set(id, entity);
    }
    return entity;
  };
  const fallback =
    input.entity_id !== undefined
      ? await visible(input.entity_id)
      : project
        ? await projectEntity(db, project.id, project.workspaceId)
        : null;

  const issues: ValidationIssue[] = [];
  let workspaceId = project?.workspaceId ?? fallback?.workspaceId ?? null;
  if (fallback && workspaceId !== null && fallback.workspaceId !== workspaceId) {
    issues.push({ loc: ["body", "entity_id"], msg: "The entity must be in the project's workspace", type: "value_error" });
  }
  const entities: EntityRow[] = [];
  for (const [index, item] of input.observations.entries()) {
    const entity = item.entity_id !== undefined ? await visible(item.entity_id) : fallback;
    if (!entity) {
      issues.push({
        loc: ["body", "observations", index, "entity_id"],
        msg: "No entity for this observation: name entity_id (here or at the top level) or a project that has an entity",
        type: "missing",
      });
      continue;
    }
    workspaceId ??= entity.workspaceId;
    if (entity.workspaceId !== workspaceId) {
      issues.push({
        loc: ["body", "observations", index, "entity_id"],
        msg: project ? "The entity must be in the project's workspace" : "Every observation's entity must be in one workspace",
        type: "value_error",
      });
    }
    entities.push(entity);
  }
  // Submitting is a write: a viewer is refused before any finding about the observations themselves.
  if (workspaceId !== null) await requireWriter(db, userId, workspaceId, "submit observations");
  if (issues.length > 0) throw new ValidationFailed(issues);
  return { project, entities, workspaceId: workspaceId as string };
}

function plannedRow(item: ObservationItem, platform: string): PlannedRow {
  const content = storableText(item.content);
  const metadata = storableJson(item.metadata) as Record<string, unknown>;
  const snapshot = sha256(
    canonicalJson({ content, metadata, observation_type: item.observation_type, signal_type: item.signal_type ?? null }),
  );
  const identity = item.source_id ? `id\u0000${item.source_id}` : `sha256\u0000${sha256(content)}`;
  const author = stringField(metadata, "author");
  return {
    dedup_key: `o:${sha256(`${platform}\u0000${identity}\u0000${snapshot}`)}`,
    parent_key: null,
    platform,
    external_id: item.source_id ? storableText(item.source_id) : null,
    url: linkOf(stringField(metadata, "source_url") ?? stringField(metadata, "url")),
    title: "",
    content,
    author: author ? clipCodePoints(author, 500) : "",
    published_at: publishedAt(metadata),
    engagement: {},
    metadata: {
      ...metadata,
      observation: {
        observation_type: item.observation_type,
        signal_type: item.signal_type ?? null,
        source_platform: item.source_platform,
        source_id: item.source_id ?? null,
        snapshot,
      },
    },
    content_hash: sha256(content),
  };
}

export async function submitObservations(
  deps: ObservationDeps,
  userId: string,
  input: SubmitObservationsInput,
): Promise<SubmitObservationsResponse> {
  const { project, entities, workspaceId } = await resolveEntities(deps.db, userId, input);
  const items: ResolvedItem[] = input.observations.map((item, index) => {
    const platform = platformOf(item.source_platform);
    return { index, item, entity: entities[index] as EntityRow, platform, row: plannedRow(item, platform) };
  });

  const written = await deps.db.$transaction(
    async (tx) => {
      const ids = new Map<string, string>();
      const inserted = new Set<string>();
      const snapshotOf = new Map<string, string | null>();
      // An observation by an author erased in the workspace (src/governance/deletion) is not stored.
      const erased = await erasedAuthors(
        tx,
        deps.config,
        workspaceId,
        items.map((it) => it.platform),
      );
      const skipped = new Set(items.filter((it) => erased(it.platform, it.row.author)).map((it) => it.index));
      const byEntity = new Map<string, ResolvedItem[]>();
      for (const it of items.filter((i) => !skipped.has(i.index))) byEntity.set(it.entity.id, [...(byEntity.get(it.entity.id) ?? []), it]);
      for (const group of byEntity.values()) {
        const entity = (group[0] as ResolvedItem).entity;
        // The first snapshot of each source, before this batch: what a changed snapshot is a snapshot of.
        for (const it of group) {
          if (!it.item.source_id || snapshotOf.has(`${entity.id}\u0000${it.row.dedup_key}`)) continue;
          const first = await tx.$queryRaw<{ id: string }[]>`
            SELECT id FROM content_store
            WHERE entity_id = ${entity.id}::uuid AND platform = ${it.platform} AND external_id = ${it.row.external_id}
              AND metadata ? 'observation' AND dedup_key <> ${it.row.dedup_key}
            ORDER BY created_at, id LIMIT 1`;
          snapshotOf.set(`${entity.id}\u0000${it.row.dedup_key}`, first[0]?.id ?? null);
          const observation = (it.row.metadata as { observation: Record<string, unknown> }).observation;
          observation.snapshot_of = first[0]?.id ?? null;
        }
        const unique = [...new Map(group.map((it) => [it.row.dedup_key, it.row])).values()];
        const result = await insertRows(
          tx,
          entity,
          "source",
          unique.map((row) => ({ ...row, parent_id: null })),
          {
            collectionRunId: null,
            collectionScope: "observations",
            coverageState: null,
          },
        );
        for (const [key, id] of result.ids) ids.set(`${entity.id}\u0000${key}`, id);
        for (const key of result.inserted) inserted.add(`${entity.id}\u0000${key}`);
      }
      return { ids, inserted, snapshotOf, skipped };
    },
    { maxWait: 10_000, timeout: 60_000 },
  );

  const keyOf = (it: ResolvedItem) => `${it.entity.id}\u0000${it.row.dedup_key}`;
  const idOf = (it: ResolvedItem) => written.ids.get(keyOf(it)) ?? "";
  const allIds = [...new Set(items.map(idOf))].filter((id) => id !== "");
  const stored = await deps.db.content.findMany({
    where: { id: { in: allIds } },
    select: { id: true, metadata: true, enrichment: { select: { enrichedAt: true } } },
  });
  const byId = new Map(stored.map((r) => [r.id, { metadata: r.metadata, enrichedAt: r.enrichment?.enrichedAt ?? null }]));
  const pending = allIds.filter((id) => !byId.get(id)?.enrichedAt);
  const queued = await enqueue(deps, pending);

  // A row created by this request, seen twice in it, is "created" once and "existing" after.
  const seen = new Set<string>();
  const observations = items.map((it) => {
    const id = idOf(it);
    if (written.skipped.has(it.index)) {
      return {
        index: it.index,
        id,
        entity_id: it.entity.id,
        platform: it.platform,
        source_platform: it.item.source_platform,
        source_id: it.item.source_id ?? null,
        status: "skipped_erased" as const,
        snapshot_of: null,
        processing_status: "skipped" as const,
      };
    }
    const created = written.inserted.has(keyOf(it)) && !seen.has(id);
    seen.add(id);
    const storedObservation = (byId.get(id)?.metadata as { observation?: { snapshot_of?: string | null } } | null)?.observation;
    return {
      index: it.index,
      id,
      entity_id: it.entity.id,
      platform: it.platform,
      source_platform: it.item.source_platform,
      source_id: it.item.source_id ?? null,
      status: created ? ("created" as const) : ("existing" as const),
      snapshot_of: storedObservation?.snapshot_of ?? null,
      processing_status: byId.get(id)?.enrichedAt ? ("enriched" as const) : queued ? ("queued" as const) : ("stored" as const),
    };
  });
  const inserted = observations.filter((o) => o.status === "created").length;
  return {
    accepted: items.length,
    processing_status: pending.length === 0 ? "enriched" : queued ? "queued" : "stored",
    ids: observations.map((o) => o.id),
    inserted,
    existing: items.length - inserted - written.skipped.size,
    skipped_erased: written.skipped.size,
    observations,
    project_id: project?.id ?? null,
    workspace_id: workspaceId,
    count_basis: OBSERVATION_COUNT_BASIS,
  };
}

/**
 * Queues the rows that are not enriched yet (new ones, and earlier snapshots whose job may have been
 * lost) under the ingest's job ids. The rows are committed: when the queue is unreachable they stay,
 * answered as `stored`, and the completeness audit shows them unenriched.
 */
async function enqueue(deps: ObservationDeps, contentIds: string[]): Promise<boolean> {
  if (contentIds.length === 0) return true;
  try {
    await deps.queues.enqueue("enrichment.content.v1", { contentIds }, { jobId: jobIds.enrichment(contentIds) });
    return true;
  } catch (err) {
    deps.logger.error(
      { rows: contentIds.length, err: (err as Error).message },
      "observation enrichment could not be queued; the rows remain unenriched",
    );
    return false;
  }
}
