/**
 * Builds the committed issue extract `raw/issues/*.jsonl` from six public archives of
 * raw GitHub REST API issue objects (origin, commits and every rule below: SOURCE.md).
 * The archives are far larger than this benchmark needs (tens of MB), so a fixed,
 * seeded subset is kept; this script is the only step between archive and extract.
 *
 *   npx tsx bench/quality/feedback/data/extract-issues.ts \
 *     --matomo <dir of the 191 page files matomoN.json> \
 *     --rust <dir of the NNNNNN-main.json files> \
 *     --gui <dir of the N.json backup files> \
 *     --neovim <repositories/ dir of the neovim/neovim-backup extract> \
 *     --cython <repositories/ dir of the cython/cython-issues extract> \
 *     --toktok <repositories/ dir of the TokTok/backup extract>
 *
 * Each directory is the archive's folder as `git archive <commit> <folder> | tar -x`
 * leaves it (commands in SOURCE.md); the last three are python-github-backup output, one
 * `<name>/issues/<number>.json` file per issue. Per issue (pull requests are skipped):
 * - kind: the maintainers' labels mapped by LABELS below; an issue carrying labels of two
 *   kinds, or of none, is left out;
 * - cython/cython issues imported from the project's earlier Trac tracker (body ending in
 *   "Migrated from http://trac.cython.org/ticket/N") are left out: their text was written
 *   for Trac and converted by a script, not written as a GitHub issue;
 * - selection: within each (repository, kind), issues ordered by
 *   sha256(`${SELECTION_SEED}\n<repo>#<number>`) and the first CAPS[repo][kind] kept, so the
 *   subset is fixed and spread over time (the dev/test split is by whole repository, see
 *   ISSUE_REPO_SPLIT in convert.ts, so selection never decides a split);
 * - kept verbatim: number, html_url, created_at, title, body (the API's markdown, never
 *   cleaned) and the label names as the API listed them.
 * `raw/issues/MANIFEST.tsv` lists every archive file that contributed an issue with its
 * sha256, so each kept record can be traced to the published bytes.
 */
import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

export type IssueKind = "bug" | "feature" | "question";

/** One issue as the extract keeps it: the API object's own fields, unchanged. */
export interface RawIssue {
  number: number;
  html_url: string;
  created_at: string;
  title: string;
  body: string | null;
  labels: string[];
}

interface ApiIssue {
  number: number;
  html_url: string;
  created_at: string;
  title: string;
  body: string | null;
  labels: { name: string }[];
  pull_request?: unknown;
}

/** Maintainer label → kind, per repository (label descriptions quoted in SOURCE.md). */
export const LABELS: Record<string, Record<string, IssueKind>> = {
  "matomo-org/matomo": { Bug: "bug", Regression: "bug", Enhancement: "feature", answered: "question" },
  "rust-lang/rust": {
    "C-bug": "bug",
    "I-ICE": "bug",
    "C-feature-request": "feature",
    "C-feature-accepted": "feature",
    "C-enhancement": "feature",
  },
  "bitcoin-core/gui": { Bug: "bug", Feature: "feature", "Questions and Help": "question" },
  "neovim/neovim": {
    bug: "bug",
    "bug-vim": "bug",
    "bug-crash": "bug",
    "bug-regression": "bug",
    enhancement: "feature",
    "closed:question": "question",
  },
  "neovim/nvim-lspconfig": { bug: "bug", enhancement: "feature", question: "question" },
  "neovim/pynvim": { bug: "bug", enhancement: "feature", question: "question" },
  "cython/cython": { defect: "bug", enhancement: "feature", feature: "feature", "support question": "question" },
  "TokTok/c-toxcore": { bug: "bug", enhancement: "feature", question: "question" },
  "TokTok/qTox": { bug: "bug", enhancement: "feature" },
};

/** How many issues of each kind to keep per repository (all of them where fewer exist). */
export const CAPS: Record<string, Record<IssueKind, number>> = {
  "matomo-org/matomo": { bug: 450, feature: 450, question: 600 },
  "rust-lang/rust": { bug: 300, feature: 300, question: 0 },
  "bitcoin-core/gui": { bug: 1000, feature: 1000, question: 1000 },
  "neovim/neovim": { bug: 130, feature: 130, question: 140 },
  "neovim/nvim-lspconfig": { bug: 100, feature: 100, question: 1000 },
  "neovim/pynvim": { bug: 1000, feature: 1000, question: 1000 },
  "cython/cython": { bug: 130, feature: 130, question: 140 },
  "TokTok/c-toxcore": { bug: 1000, feature: 1000, question: 1000 },
  "TokTok/qTox": { bug: 1000, feature: 1000, question: 1000 },
};

/** Issues an archive holds that are left out before selection, and why (SOURCE.md). */
export const LEFT_OUT: Record<string, { why: string; test: (issue: RawIssue) => boolean }> = {
  "cython/cython": {
    why: "imported from Trac",
    test: (issue) => /(^|\n)Migrated from https?:\/\/trac\.cython\.org\/ticket\/\d+\s*$/.test(issue.body ?? ""),
  },
};

export const sha256 = (data: string | Buffer) => createHash("sha256").update(data).digest("hex");

/** Seeds the selection order; fixed, so the extract is reproducible. */
export const SELECTION_SEED = "feedback-bench/issues/v1";

/** The single kind an issue's labels name, or null when they name none or several. */
export function kindOf(repo: string, labels: readonly string[]): IssueKind | null {
  const map = LABELS[repo] ?? {};
  const kinds = new Set(labels.flatMap((l) => (map[l] ? [map[l]] : [])));
  return kinds.size === 1 ? [...kinds][0]! : null;
}

interface Found {
  issue: RawIssue;
  kind: IssueKind;
  file: string;
  fileSha: string;
}

function toRaw(api: ApiIssue): RawIssue {
  return {
    number: api.number,
    html_url: api.html_url,
    created_at: api.created_at,
    title: api.title,
    body: api.body,
    labels: api.labels.map((l) => l.name),
  };
}

/** Reads every issue of one archive: `unwrap` turns one parsed file into its API issue objects. */
function readArchive(
  repo: string,
  dir: string,
  label: string,
  unwrap: (json: unknown) => ApiIssue[],
  accept: (name: string) => boolean = (name) => name.endsWith(".json"),
): { found: Found[]; leftOut: number } {
  const found: Found[] = [];
  let leftOut = 0;
  for (const name of readdirSync(dir).sort()) {
    if (!accept(name)) continue;
    const bytes = readFileSync(join(dir, name));
    const fileSha = sha256(bytes);
    for (const api of unwrap(JSON.parse(bytes.toString("utf8")))) {
      if (api.pull_request) continue;
      const issue = toRaw(api);
      const kind = kindOf(repo, issue.labels);
      if (!kind) continue;
      if (LEFT_OUT[repo]?.test(issue)) leftOut++;
      else found.push({ issue, kind, file: `${label}/${name}`, fileSha });
    }
  }
  return { found, leftOut };
}

/** One repository of a python-github-backup output: `<repositories>/<name>/issues/<number>.json`. */
function readBackup(repo: string, repositories: string): { found: Found[]; leftOut: number } {
  const name = repo.split("/")[1]!;
  return readArchive(repo, join(repositories, name, "issues"), `repositories/${name}/issues`, (j) => [j as ApiIssue]);
}

function select(repo: string, found: Found[]): Found[] {
  const caps = CAPS[repo]!;
  const byNumber = new Map(found.map((f) => [f.issue.number, f]));
  const ranked = [...byNumber.values()].sort((a, b) => {
    const ha = sha256(`${SELECTION_SEED}\n${repo}#${a.issue.number}`);
    const hb = sha256(`${SELECTION_SEED}\n${repo}#${b.issue.number}`);
    return ha < hb ? -1 : ha > hb ? 1 : 0;
  });
  const taken: Record<IssueKind, number> = { bug: 0, feature: 0, question: 0 };
  const kept = ranked.filter((f) => taken[f.kind]++ < caps[f.kind]);
  return kept.sort((a, b) => a.issue.number - b.issue.number);
}

const ARCHIVE_FLAGS = ["matomo", "rust", "gui", "neovim", "cython", "toktok"] as const;

function main() {
  const { values } = parseArgs({
    options: Object.fromEntries(ARCHIVE_FLAGS.map((flag) => [flag, { type: "string" as const }])),
  });
  const dirs = values as Partial<Record<(typeof ARCHIVE_FLAGS)[number], string>>;
  const missing = ARCHIVE_FLAGS.filter((flag) => !dirs[flag]);
  if (missing.length > 0) throw new Error(`missing ${missing.map((flag) => `--${flag}`).join(", ")} (all six archives are required)`);
  const here = dirname(fileURLToPath(import.meta.url));
  const out = join(here, "raw", "issues");
  mkdirSync(out, { recursive: true });

  const backup = (repo: string, repositories: string) => ({
    repo,
    file: `${repo.replace("/", "__")}.jsonl`,
    ...readBackup(repo, repositories),
  });
  const archives = [
    {
      repo: "matomo-org/matomo",
      file: "matomo-org__matomo.jsonl",
      ...readArchive("matomo-org/matomo", dirs.matomo!, "data/matomo-org/matomo", (j) => j as ApiIssue[]),
    },
    {
      repo: "rust-lang/rust",
      file: "rust-lang__rust.jsonl",
      ...readArchive(
        "rust-lang/rust",
        dirs.rust!,
        "items",
        (j) => [j as ApiIssue],
        (name) => name.endsWith("-main.json"),
      ),
    },
    {
      repo: "bitcoin-core/gui",
      file: "bitcoin-core__gui.jsonl",
      ...readArchive("bitcoin-core/gui", dirs.gui!, "issues", (j) => {
        const entry = j as { type?: string; issue?: ApiIssue };
        return entry.type === "issue" && entry.issue ? [entry.issue] : [];
      }),
    },
    backup("neovim/neovim", dirs.neovim!),
    backup("neovim/nvim-lspconfig", dirs.neovim!),
    backup("neovim/pynvim", dirs.neovim!),
    backup("cython/cython", dirs.cython!),
    backup("TokTok/c-toxcore", dirs.toktok!),
    backup("TokTok/qTox", dirs.toktok!),
  ];

  const manifest: string[] = ["# repository\tarchive file\tsha256 of the archive file"];
  for (const { repo, file, found, leftOut } of archives) {
    const kept = select(repo, found);
    writeFileSync(join(out, file), `${kept.map((k) => JSON.stringify(k.issue)).join("\n")}\n`);
    const files = new Map(kept.map((k) => [k.file, k.fileSha]));
    for (const [path, digest] of [...files].sort()) manifest.push(`${repo}\t${path}\t${digest}`);
    const counts = (list: Found[]) =>
      (["bug", "feature", "question"] as const).map((kind) => `${kind} ${list.filter((f) => f.kind === kind).length}`).join(", ");
    const dropped = leftOut > 0 ? `; left out ${leftOut} ${LEFT_OUT[repo]!.why}` : "";
    process.stdout.write(
      `${repo}: labelled ${found.length} (${counts(found)})${dropped}; kept ${kept.length} (${counts(kept)}) → ${file}\n`,
    );
  }
  writeFileSync(join(out, "MANIFEST.tsv"), `${manifest.join("\n")}\n`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) main();
