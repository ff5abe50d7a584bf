import { actionRoutes } from "./actions/routes.js";
import { analysisRoutes } from "./analysis/routes.js";
import { creditRoutes } from "./billing/routes.js";
import { collectionRoutes } from "./collection/routes.js";
import { collectionPlanRoutes } from "./collection-plan/routes.js";
import { connectionRoutes } from "./connection/routes.js";
import { contextRoutes } from "./context/routes.js";
import { coverageRoutes } from "./coverage/routes.js";
import { deletionRoutes } from "./deletion/routes.js";
import { embedRoutes } from "./embed/routes.js";
import { entityRoutes } from "./entities/routes.js";
import { exportRoutes } from "./export/routes.js";
import { healthRoutes } from "./health/routes.js";
import { ingestRoutes } from "./ingest/routes.js";
import { intelligenceRoutes } from "./intelligence/routes.js";
import { keyRoutes } from "./keys/routes.js";
import { knowledgeRoutes } from "./knowledge/routes.js";
import { notesRoutes } from "./notes/routes.js";
import { observationRoutes } from "./observations/routes.js";
import { onboardingRoutes } from "./onboarding/routes.js";
import type { AppDeps } from "./platform/deps.js";
import type { AnyRoute } from "./platform/http/route.js";
import { routineRoutes } from "./routines/routes.js";
import { runRoutes } from "./runs/routes.js";
import { searchRoutes } from "./search/routes.js";
import { shareLinkRoutes } from "./share/routes.js";
import { skillRoutes } from "./skills/routes.js";
import { sweepRunRoutes } from "./sweeps/routes.js";
import { webhookRoutes } from "./webhooks/routes.js";
import { workspaceRoutes } from "./workspaces/routes.js";

/** Every HTTP operation of the service, one list per domain. */
export function allRoutes(deps: AppDeps): AnyRoute[] {
  return [
    ...healthRoutes(deps),
    ...connectionRoutes(deps),
    ...keyRoutes(deps),
    ...embedRoutes(deps),
    ...contextRoutes(deps),
    ...onboardingRoutes(deps),
    ...notesRoutes(deps),
    ...searchRoutes(deps),
    ...analysisRoutes(deps),
    ...entityRoutes(deps),
    ...ingestRoutes(deps),
    ...coverageRoutes(deps),
    ...exportRoutes(deps),
    ...collectionRoutes(deps),
    ...collectionPlanRoutes(deps),
    ...sweepRunRoutes(deps),
    ...observationRoutes(deps),
    ...actionRoutes(deps),
    ...intelligenceRoutes(deps),
    ...skillRoutes(deps),
    ...runRoutes(deps),
    ...routineRoutes(deps),
    ...creditRoutes(deps),
    ...workspaceRoutes(deps),
    ...knowledgeRoutes(deps),
    ...webhookRoutes(deps),
    ...shareLinkRoutes(deps),
    ...deletionRoutes(deps),
  ];
}
