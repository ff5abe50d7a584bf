/**
 * Queues work for stored rows in id order, a page at a time: `page` answers the ids after `after` (at most a
 * job's worth, in id order; none when the walk is over) and `queue` queues one job for them. An operator's
 * recovery commands walk this way, so a table of any size is read in bounded pages and a queue failure stops
 * the walk with its error. Answers how many ids and jobs were queued.
 */
export async function queueInPages(
  page: (after: string) => Promise<string[]>,
  queue: (ids: string[]) => Promise<unknown>,
): Promise<{ rows: number; jobs: number }> {
  let after = "00000000-0000-0000-0000-000000000000";
  let rows = 0;
  let jobs = 0;
  for (;;) {
    const ids = await page(after);
    if (ids.length === 0) return { rows, jobs };
    await queue(ids);
    rows += ids.length;
    jobs += 1;
    after = ids.at(-1) as string;
  }
}
