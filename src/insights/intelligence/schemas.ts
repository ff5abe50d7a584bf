import { z } from "zod";

/**
 * The intelligence summary (`GET /agent/v1/intelligence/summary`): a decision-ready readout of
 * one entity over a window and the window before it, computed from stored originals, their
 * precomputed opinion units and the recorded coverage. Every count is of originals (sources and
 * comments), never of people.
 *
 * Glossary:
 * - window: the last `window_days` days before the request; the previous window is the same
 *   length just before it. An original belongs to the window its publication time falls in
 *   (its storage time when it has none).
 * - theme: an aspect the entity's opinion units name, with what the originals say about it.
 * - side: what one opinion unit says about its aspect: complaint (negative), praise (positive),
 *   request (a wish or feature request) or neutral.
 */
const WindowDays = z
  .string()
  .regex(/^\d{1,3}(\.\d+)?$/, "Input should be a number of days from 7 to 365")
  .transform((s) => Math.floor(Number(s)))
  .pipe(z.number().int().min(7).max(365));

export const SummaryQuery = z.object({
  entity_id: z.string().min(1).max(100),
  window_days: WindowDays.nullish().transform((v) => v ?? 30),
});
export type SummaryQuery = z.output<typeof SummaryQuery>;

export const SIDES = ["complaint", "praise", "request", "neutral"] as const;
export type Side = (typeof SIDES)[number];
export const POLARITIES = ["complaint", "praise", "mixed", "request", "neutral"] as const;
export type Polarity = (typeof POLARITIES)[number];

const Counts = z.object({ complaint: z.number().int(), praise: z.number().int(), request: z.number().int(), neutral: z.number().int() });
export type Counts = z.infer<typeof Counts>;

export const Quote = z.object({
  content_id: z.string(),
  opinion_unit_id: z.string(),
  quote: z.string(),
  start: z.number().int(),
  end: z.number().int(),
  side: z.enum(SIDES),
  sentiment: z.number(),
  platform: z.string(),
  url: z.string(),
  author: z.string(),
  published_at: z.string().nullable(),
});
export type Quote = z.infer<typeof Quote>;

const WindowCounts = z.object({ sources: z.number().int(), comments: z.number().int() });

const PlatformSummary = z.object({
  platform: z.string(),
  current: WindowCounts,
  previous: WindowCounts,
  coverage: z
    .object({
      coverage_state: z.string(),
      proven: z.boolean(),
      run_id: z.string(),
      collection_scope: z.string(),
      query: z.string().nullable(),
      started_at: z.string().nullable(),
      finished_at: z.string().nullable(),
      recorded_at: z.string(),
      targets: z.number().int(),
      targets_read_to_end: z.number().int(),
      items_found: z.number().int(),
      items_stored: z.number().int(),
    })
    .nullable(),
});
export type PlatformSummary = z.infer<typeof PlatformSummary>;

export const CHANGES = ["new", "growing", "fading", "steady"] as const;

export const Theme = z.object({
  aspect: z.string(),
  label: z.string(),
  polarity: z.enum(POLARITIES),
  sources: z.number().int(),
  share: z.number(),
  counts: Counts,
  statements: z.number().int(),
  previous_sources: z.number().int(),
  change: z.enum(CHANGES),
  quotes: z.array(Quote),
});
export type Theme = z.infer<typeof Theme>;

const ChangeItem = z.object({
  aspect: z.string(),
  label: z.string(),
  polarity: z.enum(POLARITIES),
  current_sources: z.number().int(),
  previous_sources: z.number().int(),
  current_share: z.number(),
  previous_share: z.number(),
});

const GapSide = z.object({
  entity_id: z.string(),
  name: z.string(),
  polarity: z.enum(POLARITIES),
  sources: z.number().int(),
  counts: Counts,
  quote: Quote.nullable(),
});

export const CompetitorGap = z.object({
  aspect: z.string(),
  label: z.string(),
  direction: z.enum(["competitor_ahead", "company_ahead"]),
  company: GapSide,
  competitor: GapSide,
});
export type CompetitorGap = z.infer<typeof CompetitorGap>;

const WindowRange = z.object({ start: z.string(), end: z.string() });

export const IntelligenceSummary = z.object({
  entity_id: z.string(),
  entity: z.object({ id: z.string(), name: z.string(), kind: z.string() }),
  window_days: z.number().int(),
  windows: z.object({ current: WindowRange, previous: WindowRange }),
  totals: z.object({
    current: z.object({
      sources: z.number().int(),
      comments: z.number().int(),
      with_opinion_units: z.number().int(),
      opinion_units: z.number().int(),
    }),
    previous: z.object({
      sources: z.number().int(),
      comments: z.number().int(),
      with_opinion_units: z.number().int(),
      opinion_units: z.number().int(),
    }),
  }),
  platforms: z.array(PlatformSummary),
  themes: z.array(Theme),
  changes: z.object({ new: z.array(ChangeItem), growing: z.array(ChangeItem), fading: z.array(ChangeItem) }),
  competitors: z.array(z.object({ id: z.string(), name: z.string(), sources: z.number().int() })),
  competitor_gaps: z.array(CompetitorGap),
  limitations: z.array(z.string()),
  basis: z.record(z.string(), z.string()),
  generated_at: z.string(),
});
export type IntelligenceSummary = z.infer<typeof IntelligenceSummary>;
