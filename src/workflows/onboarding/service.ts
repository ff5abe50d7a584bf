import { createHash, randomUUID } from "node:crypto";
import { requireWriter } from "../../access/workspaces/access.js";
import { canonicalJson } from "../../platform/canonical.js";
import type { Db, DbTx } from "../../platform/db.js";
import { isUniqueViolation, type Prisma } from "../../platform/db.js";
import { AppError } from "../../platform/errors.js";
import { skillPath } from "../skills/service.js";
import type { OnboardingInput, OnboardingResponse } from "./schemas.js";

/**
 * Onboarding: one interactive transaction creates (or joins) the workspace, its project,
 * the company entity, product and competitor entities under it, and the research
 * objectives as saved workflows of the company. Idempotent on `request_id`: the answer
 * is stored with the request's hash in the same transaction, so a retry replays it and
 * a different body under the same id is refused.
 */
export interface OnboardingResult {
  body: OnboardingResponse;
  replayed: boolean;
}

/** Canonical JSON (sorted keys) of the parsed request, without its request id. */
export function onboardingRequestHash(userId: string, input: OnboardingInput): string {
  const { request_id: _ignored, ...rest } = input;
  return createHash("sha256").update(userId).update("\u0000").update(canonicalJson(rest)).digest("hex");
}

const conflict = () =>
  new AppError("idempotency_conflict", "This request_id was already used for a different onboarding request; send a new request_id.");

async function storedAnswer(db: Db | DbTx, requestId: string, userId: string, hash: string): Promise<OnboardingResponse | undefined> {
  const row = await db.onboardingRequest.findUnique({ where: { requestId } });
  if (!row) return undefined;
  if (row.userId !== userId || row.requestHash !== hash) throw conflict();
  return row.response as unknown as OnboardingResponse;
}

export async function onboard(db: Db, userId: string, input: OnboardingInput): Promise<OnboardingResult> {
  const requestId = input.request_id ?? randomUUID();
  const hash = onboardingRequestHash(userId, input);

  const earlier = await storedAnswer(db, requestId, userId, hash);
  if (earlier) return { body: earlier, replayed: true };

  try {
    return await db.$transaction(
      async (tx) => {
        // Two concurrent requests with one request_id: the second waits here, then replays.
        await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${`onboarding:${requestId}`}))`;
        const raced = await storedAnswer(tx, requestId, userId, hash);
        if (raced) return { body: raced, replayed: true };
        const body = await createAll(tx, userId, requestId, input);
        await tx.onboardingRequest.create({
          data: { requestId, userId, requestHash: hash, response: body as unknown as Prisma.InputJsonValue },
        });
        return { body, replayed: false };
      },
      { timeout: 30_000, maxWait: 10_000 },
    );
  } catch (err) {
    // Last line of defence if the lock was bypassed: the primary key decides.
    if (isUniqueViolation(err)) {
      const again = await storedAnswer(db, requestId, userId, hash);
      if (again) return { body: again, replayed: true };
    }
    throw err;
  }
}

type Related = OnboardingInput["products"][number];

async function createAll(tx: DbTx, userId: string, requestId: string, input: OnboardingInput): Promise<OnboardingResponse> {
  let workspaceId = input.workspace_id;
  const workspaceCreated = workspaceId === undefined;
  if (workspaceId !== undefined) {
    await requireWriter(tx, userId, workspaceId, "onboard entities");
  } else {
    const workspace = await tx.workspace.create({ data: { name: input.company.name } });
    await tx.workspaceMember.create({ data: { workspaceId: workspace.id, userId, role: "owner" } });
    workspaceId = workspace.id;
  }

  const project = await tx.project.create({
    data: {
      workspaceId,
      name: input.company.name,
      collectionMode: input.collection_mode,
      sourceIntent: input.source_intent,
    },
  });

  const company = await tx.entity.create({
    data: {
      workspaceId,
      projectId: project.id,
      kind: "company",
      name: input.company.name,
      url: input.company.url,
      keywords: input.company.keywords,
      collectionTargets: input.company.collection_targets as Prisma.InputJsonValue,
      platforms: input.company.platforms,
    },
  });

  const related = (kind: "product" | "competitor", items: Related[]) =>
    items.map((item) => ({
      id: randomUUID(),
      workspaceId: workspaceId as string,
      projectId: project.id,
      parentEntityId: company.id,
      kind,
      name: item.name,
      url: item.url,
      keywords: item.keywords,
      collectionTargets: item.collection_targets as Prisma.InputJsonValue,
      platforms: [] as string[],
    }));
  const products = related("product", input.products);
  const competitors = related("competitor", input.competitors);
  // Products, then competitors, in request order: one statement each.
  if (products.length > 0) await tx.entity.createMany({ data: products });
  if (competitors.length > 0) await tx.entity.createMany({ data: competitors });

  const skills = input.research_objectives.map((objective, index) => {
    const id = randomUUID();
    return {
      id,
      key: objective.id ?? id,
      entityId: company.id,
      projectId: project.id,
      objectiveKey: objective.id ?? `objective-${index + 1}`,
      title: objective.title,
      question: objective.question,
      decision: objective.decision,
      evidence: objective.evidence,
      workflow: objective.workflow as unknown as Prisma.InputJsonValue,
      position: index,
    };
  });
  if (skills.length > 0) await tx.skill.createMany({ data: skills });

  const ref = (e: { id: string; name: string; kind: string; url: string }) => ({ id: e.id, name: e.name, kind: e.kind, url: e.url });
  const entityUrl = `/api/entities/${company.id}`;
  return {
    status: "created",
    request_id: requestId,
    workspace_id: workspaceId,
    workspace_created: workspaceCreated,
    project_id: project.id,
    collection_mode: input.collection_mode,
    source_intent: input.source_intent,
    company: ref(company),
    products: products.map(ref),
    competitors: competitors.map(ref),
    entity_ids: [company.id, ...products.map((e) => e.id), ...competitors.map((e) => e.id)],
    research_objectives: skills.map((s) => ({
      skill_id: s.key,
      objective_id: s.objectiveKey,
      title: s.title,
      entity_id: company.id,
      skill_url: skillPath(company.id, s.key),
    })),
    next: {
      entity: entityUrl,
      entities: "/api/entities",
      skills: `${entityUrl}/skills`,
      connection: `/agent/v1/connection?entity_id=${company.id}`,
      ingest_content: "/agent/v1/ingest/content",
      ingest_coverage: "/agent/v1/ingest/coverage",
      collection_jobs: "/agent/v1/ingest/collection/jobs",
      meetingnotes_sync: "/api/meetingnotes/sync",
      analysis_run: "/agent/v1/analysis/run",
    },
  };
}
