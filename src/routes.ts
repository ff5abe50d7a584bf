import { connectionRoutes } from "./access/connection/routes.js";
import { entityRoutes } from "./access/entities/routes.js";
import { keyRoutes } from "./access/keys/routes.js";
import { workspaceRoutes } from "./access/workspaces/routes.js";
import { exportRoutes } from "./delivery/export/routes.js";
import { shareLinkRoutes } from "./delivery/share/routes.js";
import { webhookRoutes } from "./delivery/webhooks/routes.js";
import { deletionRoutes } from "./governance/deletion/routes.js";
import { healthRoutes } from "./governance/health/routes.js";
import { analysisRoutes } from "./insights/analysis/routes.js";
import { contextRoutes } from "./insights/context/routes.js";
import { embedRoutes } from "./insights/embed/routes.js";
import { intelligenceRoutes } from "./insights/intelligence/routes.js";
import { knowledgeRoutes } from "./insights/knowledge/routes.js";
import { searchRoutes } from "./insights/search/routes.js";
import { collectionRoutes } from "./intake/collection/routes.js";
import { coverageRoutes } from "./intake/coverage/routes.js";
import { ingestRoutes } from "./intake/ingest/routes.js";
import { notesRoutes } from "./intake/notes/routes.js";
import { observationRoutes } from "./intake/observations/routes.js";
import { sweepRunRoutes } from "./intake/sweeps/routes.js";
import type { AppDeps } from "./platform/deps.js";
import type { AnyRoute } from "./platform/http/route.js";
import { actionRoutes } from "./workflows/actions/routes.js";
import { creditRoutes } from "./workflows/billing/routes.js";
import { collectionPlanRoutes } from "./workflows/collection-plan/routes.js";
import { onboardingRoutes } from "./workflows/onboarding/routes.js";
import { routineRoutes } from "./workflows/routines/routes.js";
import { runRoutes } from "./workflows/runs/routes.js";
import { skillRoutes } from "./workflows/skills/routes.js";

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
