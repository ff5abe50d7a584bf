import type { Config } from "./config.js";
import type { Logger } from "./logger.js";

/**
 * Settings the service starts without, each of which turns a feature off. Nothing is
 * generated in their place: the web process says at start-up, in one warning line, which
 * ones are unset and what does not work until they are set.
 */
export interface MissingSetting {
  variables: string[];
  disables: string;
}

export function missingSettings(config: Config): MissingSetting[] {
  const missing: MissingSetting[] = [];
  if (!config.SECRETS_KEY) {
    missing.push({
      variables: ["SECRETS_KEY"],
      disables: "meeting-note import (POST /api/meetingnotes/sync answers 503 service_unavailable); set the same value for web and worker",
    });
  }
  if (!config.ADMIN_USER || !config.ADMIN_PASSWORD) {
    missing.push({
      variables: ["ADMIN_USER", "ADMIN_PASSWORD"],
      disables: "the operator pages (/admin/queues and /metrics refuse every request)",
    });
  }
  if (config.NODE_ENV === "production" && !config.PUBLIC_BASE_URL) {
    missing.push({
      variables: ["PUBLIC_BASE_URL"],
      disables: "absolute links in answers and HTTPS-only headers (HSTS, upgrade-insecure-requests)",
    });
  }
  return missing;
}

/** One warning line naming every unset setting and the feature it disables; nothing when all are set. */
export function warnMissingSettings(logger: Logger, config: Config): void {
  const missing = missingSettings(config);
  if (missing.length === 0) return;
  const parts = missing.map((m) => `${m.variables.join(" and ")}: ${m.disables}`);
  logger.warn({ unset: missing.flatMap((m) => m.variables) }, `settings unset, so features are off: ${parts.join("; ")}`);
}
