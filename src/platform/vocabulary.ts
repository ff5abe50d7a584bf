import { z } from "zod";

/**
 * Words shared by every domain that stores or reads evidence.
 *
 * - platform: where an original came from (the spec's Platform enum).
 * - coverage state: what a collector proved about its declared scope and window.
 *   Only `exhaustive` proves full coverage; `bounded` and `sampled` are partial,
 *   `blocked` means the collector could not reach the source, `unknown` proves nothing.
 */
export const PLATFORMS = [
  "reddit",
  "youtube",
  "tiktok",
  "twitter",
  "instagram",
  "linkedin",
  "hackernews",
  "producthunt",
  "github",
  "threads",
  "web",
  "meetingnotes",
  "slack",
  "agent",
  "claude_code",
  "codex",
] as const;
export const Platform = z.enum(PLATFORMS);
export type Platform = z.infer<typeof Platform>;

export const COVERAGE_STATES = ["exhaustive", "sampled", "bounded", "blocked", "unknown"] as const;
export type CoverageState = (typeof COVERAGE_STATES)[number];
export const COVERAGE_STATE_PATTERN = /^(exhaustive|sampled|bounded|blocked|unknown)$/;
/** A coverage state as the spec writes it: a string matching the coverage-state pattern. */
export const CoverageState = z
  .string()
  .regex(COVERAGE_STATE_PATTERN)
  .transform((v) => v as CoverageState);

/**
 * `metadata.kind` of a meeting note's own row (src/intake/notes/mapping.ts). It describes the meeting
 * (title, date, people, calendar event) rather than saying anything in it, so analyses never take
 * it as evidence.
 */
export const NOTE_ROW_KIND = "meeting_note";
