/**
 * Occurrence arithmetic of routines, free of I/O. An occurrence is a moment a routine is due:
 * the first comes one interval after enabling, each next one interval after the one before.
 * Occurrences missed while no dispatcher ran coalesce: the dispatcher runs the latest one that
 * is due and moves on to the first one still in the future, never catching up one by one.
 */
export const INTERVAL_HOURS = [24, 168] as const;
export type IntervalHours = (typeof INTERVAL_HOURS)[number];

/** Credits are priced at one cent each: a ceiling of N cents admits a run priced at N credits. */
export const CENTS_PER_CREDIT = 1;

/** The largest whole number of credits a ceiling in cents admits. */
export const ceilingCredits = (maxChargeCents: number) => Math.floor(maxChargeCents / CENTS_PER_CREDIT);

export const intervalMs = (intervalHours: number, hourMs: number) => intervalHours * hourMs;

/** The first occurrence of a routine enabled at `now`. */
export const firstOccurrence = (now: Date, intervalHours: number, hourMs: number) =>
  new Date(now.getTime() + intervalMs(intervalHours, hourMs));

/**
 * The next occurrence after the interval changed: one new interval after the routine's last
 * occurrence (or `since`, when it has had none), but never in the past: an occurrence the new
 * interval would already have passed is due now, once.
 */
export function rescheduled(since: Date, intervalHours: number, hourMs: number, now: Date): Date {
  return new Date(Math.max(since.getTime() + intervalMs(intervalHours, hourMs), now.getTime()));
}

/**
 * For a routine due at `nextRunAt` (≤ now): the occurrence to run (the latest one due), how many
 * earlier ones it stands for (`coalesced`), and the next occurrence (the first after now).
 */
export function dueOccurrence(nextRunAt: Date, intervalHours: number, hourMs: number, now: Date) {
  const step = intervalMs(intervalHours, hourMs);
  const behind = Math.max(0, Math.floor((now.getTime() - nextRunAt.getTime()) / step));
  const occurrence = new Date(nextRunAt.getTime() + behind * step);
  return { occurrence, coalesced: behind, next: new Date(occurrence.getTime() + step) };
}
