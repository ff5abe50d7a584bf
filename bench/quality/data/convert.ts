/**
 * Builds `sentences.jsonl` (one labelled sentence per line) from the two published test
 * splits kept verbatim under `raw/` (origin, licences and every rule below: SOURCE.md).
 *
 *   npx tsx bench/quality/data/convert.ts
 *
 * Each raw line is `sentence####[[target, "entity attribute", polarity, opinion], ...]`.
 * Per sentence:
 * - gold polarity: positive and negative quadruples together → dropped (conflicting);
 *   otherwise the non-neutral polarity present, else neutral;
 * - gold category: the coarse category (COARSE below) most frequent among the
 *   quadruples carrying the gold polarity, ties to the first listed;
 * - text: the corpora's tokenisation undone (contractions, punctuation), standalone "i"
 *   and the first letter capitalised; the raw line stays in `raw/` for comparison.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export type Polarity = "positive" | "negative" | "neutral";

export interface GoldSentence {
  id: string;
  domain: "laptops" | "hotels";
  text: string;
  polarity: Polarity;
  category: string;
  /** The sentence's quadruples as `entity attribute/polarity`, in source order. */
  labels: string[];
}

const HERE = dirname(fileURLToPath(import.meta.url));
const SOURCES = [
  { file: "raw/laptop-acos-test.txt", domain: "laptops", prefix: "laptop-acos-test" },
  { file: "raw/oats-hotels-test.txt", domain: "hotels", prefix: "oats-hotels-test" },
] as const;

/** The reviewed item itself: its attribute names the category ("overall" for its general, quality-free remarks). */
const ITEM_ENTITIES = new Set(["laptop", "hotel"]);
const ITEM_ATTRIBUTES: Record<string, string> = {
  general: "overall",
  miscellaneous: "overall",
  quality: "quality",
  operation_performance: "performance",
  design_features: "design",
  usability: "usability",
  portability: "portability",
  connectivity: "connectivity",
  comfort: "comfort",
  cleanliness: "cleanliness",
};
/** Labels outside both published category sets (annotation slips); their quadruples are ignored. */
const INVALID_ENTITIES = new Set(["polarity", "out_of_scope"]);

/**
 * Fine category (`entity attribute`) → coarse category: any price attribute → "price";
 * the reviewed item (laptop, hotel) → its attribute via ITEM_ATTRIBUTES; any other entity
 * → the entity (underscores as spaces, "food_drinks" as "food & drinks", "fans&cooling" as "fans & cooling").
 */
export function coarse(fine: string): string | null {
  const [entity = "", attribute = ""] = fine.trim().toLowerCase().split(/\s+/);
  if (INVALID_ENTITIES.has(entity)) return null;
  if (attribute === "price" || attribute === "prices") return "price";
  if (ITEM_ENTITIES.has(entity)) return ITEM_ATTRIBUTES[attribute] ?? null;
  if (entity === "food_drinks") return "food & drinks";
  return entity.replaceAll("_", " ").replace("&", " & ");
}

/** The quadruple list: Python list syntax with single- or double-quoted strings, no escapes. */
export function parseQuads(literal: string): string[][] {
  const quads: string[][] = [];
  let current: string[] | null = null;
  for (let i = 0; i < literal.length; i++) {
    const c = literal[i]!;
    if (c === "[" && i > 0) current = [];
    else if (c === "]" && current) {
      quads.push(current);
      current = null;
    } else if ((c === "'" || c === '"') && current) {
      const end = literal.indexOf(c, i + 1);
      if (end < 0) throw new Error(`unterminated string in ${literal}`);
      current.push(literal.slice(i + 1, end));
      i = end;
    }
  }
  if (quads.some((q) => q.length !== 4)) throw new Error(`not a list of quadruples: ${literal}`);
  return quads;
}

/** Undoes the corpora's whitespace tokenisation. */
export function detokenize(tokenized: string): string {
  let s = tokenized
    .trim()
    .replaceAll("` `", '"')
    .replace(/(\w) n ' t\b/g, "$1n't")
    .replace(/(\w) ' (t|s|ll|ve|re|m|d)\b/gi, "$1'$2")
    .replace(/ +([,.!?;:%)])/g, "$1")
    .replace(/\( +/g, "(")
    .replace(/\$ +(\d)/g, "$$$1")
    .replace(/\s+/g, " ")
    .replace(/\bi\b/g, "I");
  s = s.charAt(0).toUpperCase() + s.slice(1);
  return s;
}

export type Converted = GoldSentence | { dropped: "conflicting polarities" | "no valid category" };

export function convertLine(line: string, id: string, domain: GoldSentence["domain"]): Converted {
  const at = line.indexOf("####");
  if (at < 0) throw new Error(`no label separator in line ${id}`);
  const quads = parseQuads(line.slice(at + 4));
  const valid = quads
    .map(([, fine = "", polarity = ""]) => ({ fine, polarity: polarity as Polarity, category: coarse(fine) }))
    .filter((q): q is { fine: string; polarity: Polarity; category: string } => q.category !== null);
  if (valid.length === 0) return { dropped: "no valid category" };
  const polarities = new Set(valid.map((q) => q.polarity));
  if (polarities.has("positive") && polarities.has("negative")) return { dropped: "conflicting polarities" };
  const polarity: Polarity = polarities.has("positive") ? "positive" : polarities.has("negative") ? "negative" : "neutral";
  const counts = new Map<string, number>();
  for (const q of valid.filter((v) => v.polarity === polarity)) counts.set(q.category, (counts.get(q.category) ?? 0) + 1);
  // Map iteration follows first insertion, so a strict > keeps the first listed on ties.
  let category = "";
  let best = 0;
  for (const [name, n] of counts) {
    if (n > best) {
      category = name;
      best = n;
    }
  }
  return {
    id,
    domain,
    text: detokenize(line.slice(0, at)),
    polarity,
    category,
    labels: quads.map(([, fine = "", p = ""]) => `${fine}/${p}`),
  };
}

export function readSentences(file = join(HERE, "sentences.jsonl")): GoldSentence[] {
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as GoldSentence);
}

function main() {
  const out: GoldSentence[] = [];
  const report: string[] = [];
  for (const source of SOURCES) {
    const lines = readFileSync(join(HERE, source.file), "utf8")
      .split("\n")
      .filter((l) => l !== "");
    const dropped = new Map<string, number>();
    for (const [index, line] of lines.entries()) {
      const converted = convertLine(line, `${source.prefix}:${index + 1}`, source.domain);
      if ("dropped" in converted) dropped.set(converted.dropped, (dropped.get(converted.dropped) ?? 0) + 1);
      else out.push(converted);
    }
    const kept = lines.length - [...dropped.values()].reduce((a, b) => a + b, 0);
    const why = [...dropped].map(([reason, n]) => `${n} ${reason}`).join(", ");
    report.push(`${source.file}: ${lines.length} lines, ${kept} kept, dropped: ${why || "none"}`);
  }
  writeFileSync(join(HERE, "sentences.jsonl"), `${out.map((s) => JSON.stringify(s)).join("\n")}\n`);
  process.stdout.write(`${report.join("\n")}\nwrote ${out.length} sentences to sentences.jsonl\n`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) main();
