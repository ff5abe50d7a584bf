/**
 * Reads the two labelled feedback sets kept under `raw/` (origin, licences and every rule
 * below: SOURCE.md) into typed records.
 *
 *   npx tsx bench/quality/feedback/data/convert.ts      (prints sizes per split and class)
 *
 * Issues (`raw/issues/*.jsonl`, raw GitHub API issue objects): label from the maintainers'
 * labels (LABELS in extract-issues.ts; exactly one kind, else the issue is left out),
 * title and body exactly as the API returned them (markdown, templates, code fences,
 * HTML comments; a null body becomes ""), id `owner/repo#number`.
 * Reviews (`raw/reviews/*.en.csv`, the published Mini-BAR files): label from the three
 * 0/1 columns, problem_report → bug, feature_request → feature, irrelevant → other; a
 * review marked with several of them, or none, is left out. Text verbatim, stars = score,
 * id `<app file>:<data row>` (1-based, header excluded).
 * Split: issues by whole repository (ISSUE_REPO_SPLIT: every repository of an archive or
 * organisation on one side, so the test split holds only projects that dev never shows);
 * reviews by the id's hash (splitOf: first 32 bits of its sha256 over 2^32 below DEV_SHARE
 * → dev, else test).
 */
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { type IssueKind, kindOf, type RawIssue } from "./extract-issues.js";

export type IssueLabel = IssueKind;
export type ReviewLabel = "bug" | "feature" | "other";
export type Split = "dev" | "test";

export const ISSUE_LABELS: readonly IssueLabel[] = ["bug", "feature", "question"];
export const REVIEW_LABELS: readonly ReviewLabel[] = ["bug", "feature", "other"];
export const SPLITS: readonly Split[] = ["dev", "test"];

export interface GoldIssue {
  id: string;
  repo: string;
  title: string;
  body: string;
  label: IssueLabel;
  split: Split;
}

export interface GoldReview {
  id: string;
  app?: string;
  text: string;
  label: ReviewLabel;
  /** The reviewer's star rating, 1–5. */
  stars?: number;
  split: Split;
}

const HERE = dirname(fileURLToPath(import.meta.url));
const ISSUES_DIR = join(HERE, "raw", "issues");
const REVIEWS_DIR = join(HERE, "raw", "reviews");

/** Share of the review set that goes to dev; the rest is test. */
export const DEV_SHARE = 0.4;

/**
 * The split of each issue repository: whole repositories, never divided, so that test
 * measures projects the dev split never shows. Repositories from one archive or
 * organisation (neovim/*, TokTok/*) share a side. Dev holds about 40% of the issues, and
 * every kind, questions included, is present on both sides (SOURCE.md, Splits).
 */
export const ISSUE_REPO_SPLIT: Readonly<Record<string, Split>> = {
  "rust-lang/rust": "dev",
  "neovim/neovim": "dev",
  "neovim/nvim-lspconfig": "dev",
  "neovim/pynvim": "dev",
  "TokTok/c-toxcore": "dev",
  "TokTok/qTox": "dev",
  "matomo-org/matomo": "test",
  "bitcoin-core/gui": "test",
  "cython/cython": "test",
};

/** The split of an issue repository; a repository without one is an error, not a default. */
export function issueSplitOf(repo: string): Split {
  const split = ISSUE_REPO_SPLIT[repo];
  if (!split) throw new Error(`issue repository ${repo} has no split in ISSUE_REPO_SPLIT`);
  return split;
}

/** Hash split by id, used for the reviews (and kept for ad-hoc sets). */
export function splitOf(id: string, devShare = DEV_SHARE): Split {
  const head = Number.parseInt(createHash("sha256").update(id).digest("hex").slice(0, 8), 16);
  return head / 2 ** 32 < devShare ? "dev" : "test";
}

/** `owner__repo.jsonl` → `owner/repo`. */
const repoOfFile = (file: string) => file.replace(/\.jsonl$/, "").replace("__", "/");

export function readIssues(dir = ISSUES_DIR): GoldIssue[] {
  const out: GoldIssue[] = [];
  for (const file of readdirSync(dir).sort()) {
    if (!file.endsWith(".jsonl")) continue;
    const repo = repoOfFile(file);
    const split = issueSplitOf(repo);
    const lines = readFileSync(join(dir, file), "utf8").split("\n");
    for (const line of lines) {
      if (line.trim() === "") continue;
      const raw = JSON.parse(line) as RawIssue;
      const label = kindOf(repo, raw.labels);
      if (!label) throw new Error(`${file}: issue #${raw.number} has no single kind label`);
      const id = `${repo}#${raw.number}`;
      out.push({ id, repo, title: raw.title, body: raw.body ?? "", label, split });
    }
  }
  return out;
}

/** RFC 4180 CSV: quoted fields may hold commas, doubled quotes and line breaks. */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = "";
  let quoted = false;
  const s = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (quoted) {
      if (c === '"') {
        if (s[i + 1] === '"') {
          field += '"';
          i++;
        } else quoted = false;
      } else field += c;
    } else if (c === '"' && field === "") quoted = true;
    else if (c === ",") {
      row.push(field);
      field = "";
    } else if (c === "\n" || c === "\r") {
      if (c === "\r" && s[i + 1] === "\n") i++;
      row.push(field);
      rows.push(row);
      row = [];
      field = "";
    } else field += c;
  }
  if (field !== "" || row.length > 0) {
    row.push(field);
    rows.push(row);
  }
  return rows;
}

export type ReviewDrop = "several labels" | "no label" | "empty text";

/** One data row of a Mini-BAR file → a review, or why it is left out. */
export function convertReviewRow(cells: Record<string, string>, id: string, app: string | undefined): GoldReview | { dropped: ReviewDrop } {
  const text = cells.data ?? "";
  if (text.trim() === "") return { dropped: "empty text" };
  const marks: ReviewLabel[] = [];
  if (cells.problem_report === "1") marks.push("bug");
  if (cells.feature_request === "1") marks.push("feature");
  if (cells.irrelevant === "1") marks.push("other");
  if (marks.length > 1) return { dropped: "several labels" };
  if (marks.length === 0) return { dropped: "no label" };
  const score = Number(cells.score);
  const review: GoldReview = { id, text, label: marks[0]!, split: splitOf(id) };
  if (app) review.app = app;
  if (Number.isInteger(score) && score >= 1 && score <= 5) review.stars = score;
  return review;
}

export interface ReviewRead {
  reviews: GoldReview[];
  dropped: Map<ReviewDrop, number>;
}

export function readReviewsWithDrops(dir = REVIEWS_DIR): ReviewRead {
  const reviews: GoldReview[] = [];
  const dropped = new Map<ReviewDrop, number>();
  for (const file of readdirSync(dir).sort()) {
    if (!file.endsWith(".csv")) continue;
    const [header, ...rows] = parseCsv(readFileSync(join(dir, file), "utf8"));
    if (!header) continue;
    const slug = file.replace(/\.csv$/, "");
    rows.forEach((cells, index) => {
      if (cells.length === 1 && cells[0] === "") return;
      if (cells.length !== header.length) throw new Error(`${file}: row ${index + 1} has ${cells.length} cells, header ${header.length}`);
      const record = Object.fromEntries(header.map((h, i) => [h, cells[i] ?? ""]));
      const converted = convertReviewRow(record, `${slug}:${index + 1}`, record.app || undefined);
      if ("dropped" in converted) dropped.set(converted.dropped, (dropped.get(converted.dropped) ?? 0) + 1);
      else reviews.push(converted);
    });
  }
  return { reviews, dropped };
}

export function readReviews(dir = REVIEWS_DIR): GoldReview[] {
  return readReviewsWithDrops(dir).reviews;
}

/**
 * Every labelled issue and review as a stored original would hold it, labels aside, taken in turn (an
 * issue, a review, …): the corpus of the speed benches. An issue without a body is its title.
 */
export function feedbackTexts(): { title: string; content: string; platform: "github" | "web" }[] {
  const issues = readIssues().map((i) => ({
    title: i.title,
    content: i.body.trim() === "" ? i.title : i.body,
    platform: "github" as const,
  }));
  const reviews = readReviews().map((r) => ({ title: "", content: r.text, platform: "web" as const }));
  const mixed = [];
  for (let i = 0; i < Math.max(issues.length, reviews.length); i++) {
    if (issues[i]) mixed.push(issues[i]!);
    if (reviews[i]) mixed.push(reviews[i]!);
  }
  return mixed;
}

function table<L extends string>(items: { split: Split; label: L }[], labels: readonly L[]): string[] {
  const lines = [`  ${"split".padEnd(8)}${labels.map((l) => l.padStart(10)).join("")}${"total".padStart(10)}`];
  for (const split of [...SPLITS, "all"] as const) {
    const part = split === "all" ? items : items.filter((i) => i.split === split);
    const cells = labels.map((l) => String(part.filter((i) => i.label === l).length).padStart(10)).join("");
    lines.push(`  ${split.padEnd(8)}${cells}${String(part.length).padStart(10)}`);
  }
  return lines;
}

export function describeSets(issues: GoldIssue[], reviews: GoldReview[]): string[] {
  const repos = (split: Split) => [...new Set(issues.filter((i) => i.split === split).map((i) => i.repo))];
  const lines = [
    `Issues: ${issues.length} from ${new Set(issues.map((i) => i.repo)).size} repositories, split by repository (${SPLITS.map((s) => `${s} ${repos(s).length}`).join(", ")})`,
  ];
  lines.push(...table(issues, ISSUE_LABELS));
  for (const split of SPLITS) {
    for (const repo of repos(split)) {
      const mine = issues.filter((i) => i.repo === repo);
      lines.push(`  ${split.padEnd(6)}${repo}: ${ISSUE_LABELS.map((l) => `${l} ${mine.filter((i) => i.label === l).length}`).join(", ")}`);
    }
  }
  lines.push(`Reviews: ${reviews.length} from ${new Set(reviews.map((r) => r.app)).size} apps`);
  lines.push(...table(reviews, REVIEW_LABELS));
  for (const app of [...new Set(reviews.map((r) => r.app))]) {
    const mine = reviews.filter((r) => r.app === app);
    lines.push(`  ${app}: ${REVIEW_LABELS.map((l) => `${l} ${mine.filter((r) => r.label === l).length}`).join(", ")}`);
  }
  return lines;
}

function main() {
  const issues = readIssues();
  const { reviews, dropped } = readReviewsWithDrops();
  const lines = describeSets(issues, reviews);
  lines.push(`  reviews left out: ${[...dropped].map(([why, n]) => `${n} ${why}`).join(", ") || "none"}`);
  process.stdout.write(`${lines.join("\n")}\n`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) main();
