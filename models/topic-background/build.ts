/**
 * Builds src/insights/analysis/topics/background.json, the background text key phrases are scored
 * against (see README.md): English word frequencies (english.tsv, exported from wordfreq by
 * export_english.py) and the key phrases of about 3,600 GitHub issues of as many repositories
 * (Ticket Tagger's set, bench/quality/feedback/data/SOURCE.md), counted by documents with the same
 * phrase extractor the analysis uses.
 *
 *   npx tsx models/topic-background/build.ts
 */
import { readFileSync, writeFileSync } from "node:fs";
import { readTicketTagger } from "../../bench/quality/feedback/data/ticket-tagger.js";
import { keyPhrases } from "../../src/insights/analysis/topics/phrases.js";

const HERE = new URL(".", import.meta.url);
const OUT = new URL("../../src/insights/analysis/topics/background.json", import.meta.url);
/** A software phrase is kept when this many issues use it. */
const MIN_DOCS = 3;

const english: Record<string, number> = {};
for (const line of readFileSync(new URL("english.tsv", HERE), "utf8").split("\n")) {
  const [word, zipf] = line.split("\t");
  if (word && zipf && !(word in english)) english[word] = Number(zipf);
}

const issues = readTicketTagger().kept;
const docs = new Map<string, number>();
const sentences = new Intl.Segmenter("en", { granularity: "sentence" });
let empty = 0;
for (const issue of issues) {
  const keys = new Set<string>();
  for (const { segment } of sentences.segment(issue.text)) for (const { key } of keyPhrases(segment.slice(0, 1000))) keys.add(key);
  if (keys.size === 0) empty++;
  for (const key of keys) docs.set(key, (docs.get(key) ?? 0) + 1);
}
if (empty > 0) console.log(`${empty} issues without a phrase`);
const software: Record<string, number> = {};
for (const [key, n] of [...docs].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))) if (n >= MIN_DOCS) software[key] = n;

writeFileSync(OUT, `${JSON.stringify({ english, software: { documents: issues.length, phrases: software } })}\n`);
console.log(`english words ${Object.keys(english).length}, software phrases ${Object.keys(software).length} from ${issues.length} issues`);
