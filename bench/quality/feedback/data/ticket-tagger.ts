/**
 * Reads the Ticket Tagger issues kept under `raw/ticket-tagger/` (origin and licence: SOURCE.md,
 * "Ticket Tagger issues"): 3,690 GitHub issues of about as many repositories, labelled bug /
 * enhancement / question by their maintainers, one per line in fastText's format
 * (`__label__<kind> <title> <body>`, line breaks flattened to spaces, the text CSV-quoted when it
 * holds a quote). Title and body arrive joined by one space and cannot be told apart again, so
 * the text is read as one flattened issue.
 *
 * These are training data only: never a fold of the estimate and never part of the test split.
 * An issue is left out when it names a project of the test split or of the held-out sets this
 * benchmark must not touch (NAMED_PROJECTS), or when it opens with the title of an issue of the
 * labelled issue set (the same issue twice).
 *
 *   npx tsx bench/quality/feedback/data/ticket-tagger.ts   (prints what was kept and left out)
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { type GoldIssue, type IssueLabel, readIssues } from "./convert.js";

export interface FlatIssue {
  /** `tickettagger:<line>` (1-based). */
  id: string;
  /** Title and body as one text, as the set holds them. */
  text: string;
  label: IssueLabel;
}

const FILE = join(dirname(fileURLToPath(import.meta.url)), "raw", "ticket-tagger", "rafaels-rebalanced-dataset-only-english.txt");

const LABELS: Readonly<Record<string, IssueLabel>> = { bug: "bug", enhancement: "feature", question: "question" };

/**
 * Projects an issue may not name: the test split's (Matomo, Bitcoin Core's GUI, Cython) and the
 * five projects of the held-out NLBSE'24 set (React, TensorFlow, VS Code, Bitcoin, OpenCV).
 * The set predates huggingface/datasets (2020), so none of its issues can be one of those.
 */
const NAMED_PROJECTS = /\b(?:matomo|piwik|bitcoin\w*|cython|react\w*|tensorflow|tf\.\w+|vs ?code|visual studio code|opencv|cv2)\b/i;

/** One line's text: CSV-unquoted when quoted (`"…"` with doubled inner quotes). */
function unquote(text: string): string {
  if (text.length >= 2 && text.startsWith('"') && text.endsWith('"')) return text.slice(1, -1).replace(/""/g, '"');
  return text;
}

const normalise = (text: string) => text.toLowerCase().replace(/\s+/g, " ").trim();

export interface TicketTaggerRead {
  kept: FlatIssue[];
  leftOut: { namesProject: number; duplicate: number };
}

/** `labelled`: the labelled issues, read once by a caller that has them. */
export function readTicketTagger(labelled: GoldIssue[] = readIssues(), file = FILE): TicketTaggerRead {
  const titles = labelled.map((i) => normalise(i.title)).filter((t) => t.length >= 12);
  const kept: FlatIssue[] = [];
  const leftOut = { namesProject: 0, duplicate: 0 };
  readFileSync(file, "utf8")
    .split("\n")
    .forEach((line, i) => {
      const match = /^__label__(\w+) (.*)$/.exec(line);
      if (!match) return;
      const label = LABELS[match[1]!];
      if (!label) throw new Error(`ticket-tagger line ${i + 1}: unknown label ${match[1]}`);
      const text = unquote(match[2]!.trim());
      if (NAMED_PROJECTS.test(text)) {
        leftOut.namesProject++;
        return;
      }
      const opening = normalise(text);
      if (titles.some((t) => opening.startsWith(t))) {
        leftOut.duplicate++;
        return;
      }
      kept.push({ id: `tickettagger:${i + 1}`, text, label });
    });
  return { kept, leftOut };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { kept, leftOut } = readTicketTagger();
  const count = (label: IssueLabel) => kept.filter((k) => k.label === label).length;
  process.stdout.write(
    `Ticket Tagger: kept ${kept.length} (bug ${count("bug")}, feature ${count("feature")}, question ${count("question")}); ` +
      `left out ${leftOut.namesProject} naming a test-split or held-out project, ${leftOut.duplicate} already in the labelled issues\n`,
  );
}
