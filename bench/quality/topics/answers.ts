/**
 * A product manager's questions over a corpus, through the real service, written out for grading:
 *
 *   npx tsx bench/quality/topics/answers.ts --corpus cython|matomo|neovim|garmin|huawei|samsung [--out file.md]
 *
 * Every source is stored as one original of one entity (issues: title and markdown body; reviews: the
 * review's text), enriched by the worker's processors, then five questions a product team asks run as
 * deep analyses. The answer, its themes (title, kind, sources) and the quotes with their sources' titles
 * are written as Markdown, one section per question, for a reader who grades them blind (1–5 on: answers
 * the question; distinct themes with the right polarity in a product team's words; relevance of the
 * quoted sources; would act on it). The grades and the graded answers are kept in
 * bench/quality/topics/grades/.
 */
import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { type BenchSource, withBenchService } from "../analysis.js";
import { readReviews } from "../feedback/data/convert.js";
import { readAreaIssues } from "./areas.js";

const { values } = parseArgs({
  options: { corpus: { type: "string", default: "cython" }, out: { type: "string" }, limit: { type: "string" } },
});
const DATABASE_URL = process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/test";

const ISSUE_QUESTIONS = [
  "What problems do users run into when getting started?",
  "Which features do users request most?",
  "What bugs do users report most?",
  "Why do users give up or switch to something else?",
  "What do users talk about most?",
];
const REVIEW_QUESTIONS = [
  "What do users complain about most?",
  "What do users love?",
  "Which features do users request most?",
  "What problems appeared after recent updates?",
  "Why do users give up or switch to something else?",
];

const REPOS: Record<string, string> = {
  cython: "cython/cython",
  matomo: "matomo-org/matomo",
  neovim: "neovim/neovim",
  rust: "rust-lang/rust",
};
const APPS: Record<string, string> = { garmin: "Garmin Connect", huawei: "Huawei Health", samsung: "Samsung Health" };

function corpus(name: string): { entity: string; sources: BenchSource[]; questions: string[] } {
  const repo = REPOS[name];
  if (repo) {
    const issues = readAreaIssues(repo);
    return {
      entity: repo.split("/")[1]!,
      questions: ISSUE_QUESTIONS,
      sources: issues.map((i) => ({
        id: i.id,
        title: i.title,
        content: i.body.trim() === "" ? i.title : i.body,
        platform: "github",
        url: `https://github.com/${repo}/issues/${i.id.split("#")[1]}`,
        author: `reporter-${i.id.split("#")[1]}`,
      })),
    };
  }
  const app = APPS[name];
  if (!app) throw new Error(`unknown corpus ${name}`);
  const reviews = readReviews().filter((r) => r.app === app);
  return {
    entity: app,
    questions: REVIEW_QUESTIONS,
    sources: reviews.map((r) => ({
      id: r.id,
      content: r.text,
      platform: "web",
      url: `https://play.google.com/store/apps/review/${encodeURIComponent(r.id)}`,
      author: `reviewer-${r.id}`,
    })),
  };
}

interface Insight {
  title: string;
  polarity?: string;
  aspect?: string | null;
  evidence?: { number?: number; content_id?: string }[];
}
interface Evidence {
  number: number;
  content_id: string;
  quote?: string;
  title?: string;
}

const picked = corpus(values.corpus);
const limit = values.limit ? Number(values.limit) : picked.sources.length;
const sources = picked.sources.slice(0, limit);
const lines: string[] = [`# ${picked.entity}: ${sources.length} sources`, ""];
await withBenchService(DATABASE_URL, async (service) => {
  const entity = await service.call("POST", "/api/entities", { name: picked.entity, kind: "product" });
  const entityId = entity.id as string;
  const ids = await service.ingest(entityId, sources);
  await service.enriched(entityId, sources.length);
  const titleOf = new Map(sources.map((s) => [ids.get(s.id)!, s.title ?? ""]));
  for (const question of picked.questions) {
    const t0 = performance.now();
    const run = await service.analyse(entityId, question);
    const data = (run.data ?? {}) as { answer?: string; insights?: Insight[]; evidence?: Evidence[]; limitations?: string[] };
    lines.push(
      `## ${question}`,
      "",
      `_${run.status}, ${((performance.now() - t0) / 1000).toFixed(1)} s_`,
      "",
      data.answer ?? "(no answer)",
      "",
    );
    for (const insight of data.insights ?? []) lines.push(`- **${insight.title}**`);
    lines.push("");
    for (const e of data.evidence ?? []) {
      const title = e.title ?? titleOf.get(e.content_id) ?? "";
      lines.push(`[${e.number}] ${title ? `(${title}) ` : ""}"${(e.quote ?? "").replace(/\s+/g, " ").slice(0, 300)}"`);
    }
    if ((data.limitations ?? []).length > 0) lines.push("", `Limitations: ${(data.limitations ?? []).join(" / ")}`);
    lines.push("");
    console.log(`${question}: ${run.status}`);
  }
});
const text = lines.join("\n");
if (values.out) writeFileSync(values.out, text);
else console.log(text);
