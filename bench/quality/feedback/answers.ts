import { performance } from "node:perf_hooks";
import { withBenchService } from "../analysis.js";
import type { GoldIssue } from "./data/convert.js";

/**
 * Answers on labelled issues, through the real service: every issue of the split is stored as one
 * original of one entity (title and markdown body, as GitHub's API gives them), enriched by the
 * worker's processors, then two questions a product team asks are run as deep analyses:
 * - "Which features do users request most?": the share of its quoted sources that the maintainers
 *   labelled feature (target ≥ 0.8);
 * - "What bugs do users report most?": the share labelled bug (target ≥ 0.8);
 * - themes named after a template heading (a heading that recurs in at least 1% of the issues, e.g.
 *   "Steps to reproduce", "Feature request"): target 0;
 * - the overlap of the two answers' cited sources, |A ∩ B| / min(|A|, |B|): target ≤ 0.3.
 * Beside each share, in the same run, the baseline a plain search gives: the share of the asked
 * kind among the top sources that `POST /agent/v1/search` answers for the question (as many as
 * the analysis cited, at least 10).
 */
const QUESTIONS = [
  { question: "Which features do users request most?", kind: "feature" },
  { question: "What bugs do users report most?", kind: "bug" },
] as const;
const TARGETS = { share: 0.8, headings: 0, overlap: 0.3 };

interface AnswerData {
  answer?: string;
  evidence?: { content_id: string }[];
  insights?: { title: string; aspect: string | null }[];
}

const normalise = (text: string) =>
  text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s]/gu, " ")
    .replace(/\s+/g, " ")
    .trim();

/** A heading that recurs in at least this share of the issues (and in 5 of them) is a template's. */
const TEMPLATE_SHARE = 0.01;

/** The template headings of the corpus (markdown headings and bold lines standing alone, normalised) that recur across issues. */
function headingsOf(issues: GoldIssue[]): Set<string> {
  const issuesWith = new Map<string, number>();
  for (const issue of issues) {
    const seen = new Set<string>();
    for (const line of issue.body.split(/\r?\n/)) {
      const m = /^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$/.exec(line) ?? /^\s*(?:\*\*|__)(.+?)(?:\*\*|__)\s*:?\s*$/.exec(line);
      const text = m ? normalise(m[1]!) : "";
      if (text.length >= 3) seen.add(text);
    }
    for (const text of seen) issuesWith.set(text, (issuesWith.get(text) ?? 0) + 1);
  }
  const min = Math.max(5, Math.ceil(TEMPLATE_SHARE * issues.length));
  return new Set([...issuesWith].filter(([, n]) => n >= min).map(([text]) => text));
}

/** The name a theme's title gives it ("Steps — complaints (219 sources)" → "steps"). */
const themeName = (title: string) => normalise(title.split(" — ")[0] ?? title);

/**
 * `kinds`, when given, replaces the feedback kind and confidence enrichment stored for each issue (by
 * issue id) before the questions run: on dev, the kinds of models that never saw the issue's project
 * (out-of-fold.ts), so the dev answers measure what the test answers measure.
 */
export async function answerSection(
  issues: GoldIssue[],
  databaseUrl: string,
  log: (line?: string) => void,
  split: string,
  kinds?: ReadonlyMap<string, { kind: string; confidence: number }>,
) {
  log(`4. Answers on the labelled issues of the ${split} split, through the service (deep analyses)`);
  const headings = headingsOf(issues);
  log(
    `   ${headings.size} template headings recur in the corpus, e.g. ${[...headings]
      .slice(0, 6)
      .map((h) => JSON.stringify(h))
      .join(", ")}`,
  );
  return withBenchService(databaseUrl, async (service) => {
    const entity = await service.call("POST", "/api/entities", { name: "Tracked project", kind: "product" });
    const entityId = entity.id as string;
    const t0 = performance.now();
    const contentIdOf = await service.ingest(
      entityId,
      issues.map((i) => ({
        id: i.id,
        title: i.title,
        content: i.body.trim() === "" ? i.title : i.body,
        platform: "github",
        url: `https://github.com/${i.repo}/issues/${i.id.split("#")[1]}`,
        author: `reporter-${i.id}`,
      })),
    );
    await service.enriched(entityId, issues.length);
    const seconds = (performance.now() - t0) / 1000;
    log(
      `   ${issues.length} issues stored and enriched in ${seconds.toFixed(1)} s (${(issues.length / seconds).toFixed(0)} rows/s, ingest included)`,
    );
    const labelOf = new Map(issues.map((i) => [contentIdOf.get(i.id)!, i.label]));
    if (kinds) {
      const read = issues.filter((i) => kinds.has(i.id));
      await service.query(
        `UPDATE content_enrichment e SET feedback_kind = u.kind, feedback_kind_confidence = u.confidence
         FROM unnest($1::uuid[], $2::text[], $3::real[]) AS u(id, kind, confidence) WHERE e.content_id = u.id`,
        [read.map((i) => contentIdOf.get(i.id)), read.map((i) => kinds.get(i.id)!.kind), read.map((i) => kinds.get(i.id)!.confidence)],
      );
      log(`   feedback kinds of ${read.length} issues from models that did not see their project (out-of-fold.ts)`);
    }

    const cited: Set<string>[] = [];
    const targets: string[] = [];
    let headingThemes = 0;
    for (const { question, kind } of QUESTIONS) {
      const run = await service.analyse(entityId, question);
      const data = (run.data ?? {}) as AnswerData;
      const sources = new Set((data.evidence ?? []).map((e) => e.content_id));
      cited.push(sources);
      const share = sources.size === 0 ? 0 : [...sources].filter((id) => labelOf.get(id) === kind).length / sources.size;
      const named = (data.insights ?? []).filter(
        (i) => headings.has(themeName(i.title)) || (i.aspect !== null && headings.has(normalise(i.aspect))),
      );
      headingThemes += named.length;
      const n = Math.max(10, sources.size);
      const search = await service.call("POST", "/agent/v1/search", { query: question, limit: Math.min(200, n) });
      const found = ((search.results ?? []) as { content_id?: string }[])
        .map((r) => r.content_id)
        .filter((id): id is string => Boolean(id));
      const baseline = found.length === 0 ? 0 : found.filter((id) => labelOf.get(id) === kind).length / found.length;
      log(`   ${JSON.stringify(question)} (${run.status})`);
      log(`     answer: ${(data.answer ?? "").slice(0, 300)}${(data.answer ?? "").length > 300 ? " …" : ""}`);
      log(`     themes: ${(data.insights ?? []).map((i) => i.title).join(" | ") || "-"}`.slice(0, 400));
      log(
        `     quoted sources labelled ${kind}: ${[...sources].filter((id) => labelOf.get(id) === kind).length} of ${sources.size} = ${share.toFixed(3)}; ` +
          `search baseline (top ${found.length}): ${baseline.toFixed(3)}; themes named after a heading: ${named.length}${named.length ? ` (${named.map((i) => i.title).join(", ")})` : ""}`,
      );
      targets.push(
        `${question} share of ${kind} sources ≥ ${TARGETS.share}: ${share.toFixed(3)} (search ${baseline.toFixed(3)})  ${share >= TARGETS.share ? "PASS" : "FAIL"}`,
      );
    }
    const [a, b] = cited as [Set<string>, Set<string>];
    const both = [...a].filter((id) => b.has(id)).length;
    const overlap = Math.min(a.size, b.size) === 0 ? 0 : both / Math.min(a.size, b.size);
    log(`   overlap of the two answers' cited sources: ${both} shared, ${a.size} and ${b.size} cited: ${overlap.toFixed(3)}`);
    targets.push(
      `themes named after a template heading = ${TARGETS.headings}: ${headingThemes}  ${headingThemes === TARGETS.headings ? "PASS" : "FAIL"}`,
    );
    targets.push(
      `overlap of the two answers' cited sources ≤ ${TARGETS.overlap}: ${overlap.toFixed(3)}  ${overlap <= TARGETS.overlap ? "PASS" : "FAIL"}`,
    );
    return { targets };
  });
}
