import { github } from "./github.js";
import { hackernews } from "./hackernews.js";
import { reddit } from "./reddit.js";
import type { Collector } from "./types.js";
import { web } from "./web.js";

export type CollectorRegistry = Partial<Record<string, Collector>>;

/** The collectors this deployment runs, by platform. */
export const defaultCollectors: CollectorRegistry = { hackernews, reddit, github, web };

/** Why a platform with no collector is recorded as `blocked`. */
export const noCollectorReason = (platform: string) =>
  `no ${platform} collector is configured in this deployment: it needs provider credentials this deployment does not have`;
