import { backgroundRate, zipfOf } from "./background.js";
import { keyPhrases } from "./phrases.js";

/**
 * Topics of a corpus, found in the corpus itself (pure). A topic is a group of key phrases that mean
 * the same thing here ("parquet files", "csv files", "file formats"), with every source that uses one
 * of them. The design follows BERTopic (Grootendorst, 2022: embed, cluster, name clusters by their
 * class-specific terms), turned around so that names stay in the corpus's own words and every count
 * is of sources a reader can open:
 *
 *   1. key phrases of every statement (phrases.ts), counted by distinct sources; plural and singular
 *      forms are one phrase when the corpus uses both ("file", "files");
 *   2. a phrase is a candidate when enough sources use it and they use it far more than background
 *      text does (background.ts: general English and other software projects' issues), so words every
 *      corpus uses ("line", "error", "version", "thing") and the tracked product's own name never name
 *      a topic; a phrase inside a longer candidate that carries nearly all its sources gives way to
 *      the longer one ("parquet" → "parquet files");
 *   3. candidates are grouped by meaning: average-linkage clustering on the larger of their embeddings'
 *      cosine and the overlap of the sources that use them (phrases said together in the same sources
 *      are one subject of this corpus, whatever general English thinks of them);
 *   4. each group is named by its most representative phrase: the most used, weighed by how close it
 *      sits to the group's centre.
 */
export interface TopicUnit {
  contentId: string;
  text: string;
  /** What enrichment named in the statement, best first ("pricing", "web clipper"), if anything. */
  terms?: readonly string[];
  /** The aspect enrichment read the statement as being about (its subject), if any. */
  aspect?: string | null;
}

/**
 * General aspects (enrichment's lexicon: pricing, support, battery, …) a corpus of reviews or posts may be
 * read through: `named(term)` gives the display name of a term that is one ("Pricing"), null otherwise.
 * An issue tracker's corpus is not: its "cost" is a time cost and its "return" a keyword.
 */
export interface GeneralAspects {
  named: (term: string) => string | null;
}

export interface Topic {
  /** The naming phrase's key; the topic's identity within one analysis. */
  key: string;
  /** The naming phrase as the corpus writes it most often ("Parquet files"). */
  name: string;
  /** Every phrase of the topic (keys), naming phrase first. */
  phrases: string[];
  /** Distinct sources using any of its phrases. */
  sources: Set<string>;
}

export interface TopicModel {
  topics: Topic[];
  /** The topic a statement is about (by its most distinctive phrase), or null. */
  topicOf: (unit: TopicUnit) => Topic | null;
  minSupport: number;
}

/** How much being the statement's subject (enrichment's first term) outweighs distinctiveness. */
const SUBJECT_BONUS = 1e6;
/** A single word this common in English (Zipf) names a statement's subject only after a general aspect does. */
const COMMON_ZIPF = 4.5;
/** A single word this common in English (Zipf 5: once in 100,000 words) names a topic only when no other phrase of it can. */
const COMMON_ZIPF_NAME = 5;

/** Embeds short texts as unit vectors (one per text, same order). */
export type PhraseEmbedder = (texts: string[]) => ArrayLike<number>[];

export const TOPIC_SETTINGS = {
  /** A candidate phrase is used this many times more often than background text uses it. */
  minLift: 6,
  /**
   * A phrase more than this share of the sources use is the corpus's frame (the product itself, "vim" in
   * an editor's tracker), not one topic of it.
   */
  frameShare: 0.2,
  /** Corpora smaller than this have no frame: a dozen reviews may all be about the price. */
  frameMinSources: 100,
  /** Corpora smaller than this keep topics a single source talks about. */
  smallCorpus: 30,
  /** Phrases count as said together only when the rarer one has at least this many sources. */
  minTogether: 3,
  /** Candidates kept for grouping, most distinctive first. */
  maxCandidates: 400,
  /** Groups merge while their average similarity is at least this. */
  mergeAt: 0.68,
  /** A sub-phrase carrying at least this share of a longer candidate's sources gives way to it. */
  subsumedShare: 0.8,
  /** A title's mention of a topic weighs as much as this many statements about it. */
  titleWeight: 2,
  /** A source is about each topic it gives at least this share of its main topic's weight. */
  salientShare: 0.5,
};

interface Candidate {
  key: string;
  surface: string;
  sources: Set<string>;
  score: number;
}

const singularOf = (key: string) => {
  const words = key.split(" ");
  const last = words.at(-1)!;
  const forms =
    last.endsWith("ies") && last.length > 4
      ? [`${last.slice(0, -3)}y`]
      : last.endsWith("es")
        ? [last.slice(0, -2), last.slice(0, -1)]
        : last.endsWith("s") && !last.endsWith("ss")
          ? [last.slice(0, -1)]
          : [];
  return forms.map((f) => [...words.slice(0, -1), f].join(" "));
};

export function discoverTopics(
  units: readonly TopicUnit[],
  sourceCount: number,
  entityNames: readonly string[],
  embed: PhraseEmbedder,
  titles: ReadonlyMap<string, string> = new Map(),
  general: GeneralAspects | null = null,
  settings = TOPIC_SETTINGS,
): TopicModel {
  // A handful of sources is read whole: each statement's subject is a topic of its own.
  const minSupport = sourceCount < settings.smallCorpus ? 1 : Math.max(2, Math.ceil(0.01 * sourceCount));
  const nameWords = new Set(
    entityNames.flatMap((n) => n.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).flatMap((w) => [w, ...singularOf(w)]),
  );

  // 1. Phrases by distinct sources, with their written forms; the corpus's mean source length in words.
  const sourcesOf = new Map<string, Set<string>>();
  const surfaces = new Map<string, Map<string, number>>();
  const phrasesOfUnit = new Map<TopicUnit, string[]>();
  const wordsOfSource = new Map<string, number>();
  const titlePhrases = new Map<string, string[]>();
  const saidWhole = new Set<string>();
  const read = (contentId: string, text: string) => {
    const hits = keyPhrases(text);
    wordsOfSource.set(contentId, (wordsOfSource.get(contentId) ?? 0) + (text.match(/\S+/gu)?.length ?? 0));
    for (const h of hits) {
      const set = sourcesOf.get(h.key) ?? new Set<string>();
      set.add(contentId);
      sourcesOf.set(h.key, set);
      const forms = surfaces.get(h.key) ?? new Map<string, number>();
      forms.set(h.surface, (forms.get(h.surface) ?? 0) + 1);
      surfaces.set(h.key, forms);
    }
    // Said whole also when only the tracked product's name stands before it ("the Acme Notes widget").
    for (const h of hits)
      if (h.whole)
        saidWhole.add(
          h.key
            .split(" ")
            .filter((w) => !nameWords.has(w))
            .join(" "),
        );
    return hits.map((h) => h.key);
  };
  for (const [contentId, title] of titles) titlePhrases.set(contentId, read(contentId, title));
  const generalKeys = new Set<string>();
  const phraseCountOf = new Map<TopicUnit, number>();
  for (const u of units) {
    const keys = read(u.contentId, u.text);
    phraseCountOf.set(u, keys.length);
    // A general aspect the statement names is one of its phrases, under its display name.
    for (const term of general ? (u.terms ?? []) : []) {
      const name = general!.named(term);
      if (name === null) continue;
      const key = term;
      generalKeys.add(key);
      if (!keys.includes(key)) keys.push(key);
      const set = sourcesOf.get(key) ?? new Set<string>();
      set.add(u.contentId);
      sourcesOf.set(key, set);
      const forms = surfaces.get(key) ?? new Map<string, number>();
      forms.set(name, (forms.get(name) ?? 0) + 1);
      surfaces.set(key, forms);
    }
    phrasesOfUnit.set(u, keys);
  }
  const meanWords = wordsOfSource.size === 0 ? 0 : [...wordsOfSource.values()].reduce((a, b) => a + b, 0) / wordsOfSource.size;
  // Plural forms join their singular when the corpus uses both.
  const canonical = new Map<string, string>();
  for (const key of sourcesOf.keys()) {
    const single = singularOf(key).find((s) => sourcesOf.has(s));
    if (single) canonical.set(key, single);
  }
  const canon = (key: string) => canonical.get(key) ?? key;
  const merged = new Map<string, Set<string>>();
  const mergedSurfaces = new Map<string, Map<string, number>>();
  for (const [key, sources] of sourcesOf) {
    const c = canon(key);
    merged.set(c, new Set([...(merged.get(c) ?? []), ...sources]));
    const forms = mergedSurfaces.get(c) ?? new Map<string, number>();
    for (const [f, n] of surfaces.get(key) ?? []) forms.set(f, (forms.get(f) ?? 0) + n);
    mergedSurfaces.set(c, forms);
  }

  // 2. Candidates: used by enough sources, far more than background text uses them.
  const n = Math.max(1, sourceCount);
  let candidates: Candidate[] = [];
  for (const [key, sources] of merged) {
    if (sources.size < minSupport || (n >= settings.frameMinSources && sources.size > settings.frameShare * n)) continue;
    const words = key.split(" ");
    if (words.some((w) => nameWords.has(w))) continue;
    // A word only ever said as the tail of longer phrases ("mode" of "dark mode" and "reading mode") is no topic of its own.
    if (words.length === 1 && !saidWhole.has(key) && !saidWhole.has(`${key}s`) && !generalKeys.has(key)) continue;
    const rate = sources.size / n;
    const bg = Math.max(...[key, ...(sourcesOf.has(`${key}s`) ? [`${key}s`] : [])].map((k) => backgroundRate(k, meanWords)));
    const lift = rate / bg;
    if (lift < settings.minLift) continue;
    const forms = [...(mergedSurfaces.get(key) ?? [])].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
    // A short word that is not English and is written in lower case is an identifier ("str", "fn",
    // "vec"); an acronym is written in capitals ("LSP", "LLVM").
    if (words.length === 1 && key.length <= 5 && zipfOf(key) < 2.5 && forms[0]?.[0] === forms[0]?.[0].toLowerCase()) continue;
    candidates.push({ key, surface: forms[0]?.[0] ?? key, sources, score: sources.size * Math.log(lift) });
  }
  candidates.sort((a, b) => b.score - a.score || a.key.localeCompare(b.key));
  // A sub-phrase that is nearly always said as part of a longer candidate gives way to it.
  const longer = candidates.filter((c) => c.key.includes(" "));
  candidates = candidates.filter((c) => {
    const inside = longer.filter((l) => l !== c && ` ${l.key} `.includes(` ${c.key} `));
    return !inside.some((l) => l.sources.size >= settings.subsumedShare * c.sources.size);
  });
  candidates = candidates.slice(0, settings.maxCandidates);
  if (candidates.length === 0) return { topics: [], topicOf: () => null, minSupport };

  // 3. Grouped by meaning and by the sources that say them together.
  const vectors = embed(candidates.map((c) => c.surface.toLowerCase()));
  const similarity = (i: number, j: number) => {
    const a = vectors[i]!;
    const b = vectors[j]!;
    let dot = 0;
    for (let d = 0; d < a.length; d++) dot += a[d]! * b[d]!;
    const si = candidates[i]!.sources;
    const sj = candidates[j]!.sources;
    const [small, large] = si.size <= sj.size ? [si, sj] : [sj, si];
    let both = 0;
    for (const s of small) if (large.has(s)) both++;
    // Said together by a few sources is chance; by several, a subject of this corpus.
    const together = small.size < settings.minTogether ? 0 : both / Math.sqrt(si.size * sj.size);
    return Math.max(dot, together);
  };
  const groups = averageLinkage(candidates.length, similarity, settings.mergeAt);

  // 4. Named by the most representative phrase.
  const topics: Topic[] = [];
  for (const members of groups) {
    const sources = new Set(members.flatMap((i) => [...candidates[i]!.sources]));
    if (sources.size < minSupport) continue;
    const centrality = (i: number) =>
      members.length === 1 ? 1 : members.reduce((sum, j) => (j === i ? sum : sum + similarity(i, j)), 0) / (members.length - 1);
    const ranked = [...members].sort(
      (a, b) =>
        candidates[b]!.score * (0.5 + centrality(b)) - candidates[a]!.score * (0.5 + centrality(a)) ||
        candidates[a]!.key.localeCompare(candidates[b]!.key),
    );
    // A word every corpus uses ("report", "case") names the group only when nothing else in it can.
    const plain = (i: number) => !candidates[i]!.key.includes(" ") && zipfOf(candidates[i]!.key) >= COMMON_ZIPF_NAME;
    const naming = ranked.find((i) => !plain(i)) ?? ranked[0]!;
    const head = candidates[naming]!;
    const phrases = [naming, ...ranked.filter((i) => i !== naming)].map((i) => candidates[i]!.key);
    topics.push({ key: head.key, name: head.surface, phrases, sources });
  }
  topics.sort((a, b) => b.sources.size - a.sources.size || a.key.localeCompare(b.key));

  const topicOfPhrase = new Map<string, { topic: Topic; score: number }>();
  const scoreOf = new Map(candidates.map((c) => [c.key, c.score]));
  for (const topic of topics) for (const key of topic.phrases) topicOfPhrase.set(key, { topic, score: scoreOf.get(key) ?? 0 });
  // A statement's topics, each by its best phrase there: the first one it says (what a sentence is about
  // comes first in English: "Offline mode is fantastic, I wrote notes for a whole flight"), then a general
  // aspect it implies ("Ten dollars a month is too expensive": pricing); `ordered` only for choosing one.
  const topicsIn = (keys: readonly string[], ordered = false, phraseCount = keys.length) => {
    const found = new Map<Topic, number>();
    keys.forEach((key, at) => {
      const hit = topicOfPhrase.get(canon(key));
      if (!hit) return;
      const common = !key.includes(" ") && zipfOf(key) >= COMMON_ZIPF;
      const place = at >= phraseCount ? 0.5 : common ? 0.2 / (1 + at) : 1 / (1 + at);
      const score = ordered ? place * SUBJECT_BONUS + hit.score : hit.score;
      if (score > (found.get(hit.topic) ?? -1)) found.set(hit.topic, score);
    });
    return found;
  };
  const bestOf = (found: Map<Topic, number>, allowed?: ReadonlySet<Topic>) => {
    let best: Topic | null = null;
    let score = -1;
    for (const [topic, s] of found) if ((!allowed || allowed.has(topic)) && s > score) [best, score] = [topic, s];
    return best;
  };

  // 5. What each source is about: the topics it gives most of its statements to (its title counting as
  // two), not every topic it mentions in passing.
  const weights = new Map<string, Map<Topic, number>>();
  const weigh = (contentId: string, topic: Topic, w: number) => {
    const of = weights.get(contentId) ?? new Map<Topic, number>();
    of.set(topic, (of.get(topic) ?? 0) + w);
    weights.set(contentId, of);
  };
  for (const [contentId, keys] of titlePhrases) for (const topic of topicsIn(keys).keys()) weigh(contentId, topic, settings.titleWeight);
  for (const u of units) for (const topic of topicsIn(phrasesOfUnit.get(u) ?? []).keys()) weigh(u.contentId, topic, 1);
  const salient = new Map<string, Set<Topic>>();
  for (const [contentId, of] of weights) {
    const top = Math.max(...of.values());
    salient.set(contentId, new Set([...of].filter(([, w]) => w >= settings.salientShare * top).map(([t]) => t)));
  }
  for (const topic of topics) topic.sources = new Set([...topic.sources].filter((id) => salient.get(id)?.has(topic)));
  const kept = topics
    .filter((t) => t.sources.size >= minSupport)
    .sort((a, b) => b.sources.size - a.sources.size || a.key.localeCompare(b.key));

  const topicOf = (u: TopicUnit): Topic | null => {
    const keys = phrasesOfUnit.get(u) ?? keyPhrases(u.text).map((h) => h.key);
    const allowed = salient.get(u.contentId);
    return allowed ? bestOf(topicsIn(keys, true, phraseCountOf.get(u) ?? keys.length), allowed) : null;
  };
  return { topics: kept, topicOf, minSupport };
}

/**
 * Average-linkage agglomerative clustering of `count` items: the two groups with the highest mean
 * pairwise similarity merge while it is at least `threshold`. O(n²) memory, O(n³) worst-case time,
 * for the few hundred candidates an analysis groups.
 */
export function averageLinkage(count: number, similarity: (i: number, j: number) => number, threshold: number): number[][] {
  const sim: Float64Array[] = [];
  for (let i = 0; i < count; i++) {
    const row = new Float64Array(count);
    for (let j = 0; j < i; j++) {
      const s = similarity(i, j);
      row[j] = s;
      sim[j]![i] = s;
    }
    sim.push(row);
  }
  const groups: (number[] | null)[] = Array.from({ length: count }, (_, i) => [i]);
  // Sum of pairwise similarities between live groups a and b, kept in `sim` (a's row).
  for (;;) {
    let best = -Infinity;
    let bi = -1;
    let bj = -1;
    for (let i = 0; i < count; i++) {
      const gi = groups[i];
      if (!gi) continue;
      for (let j = i + 1; j < count; j++) {
        const gj = groups[j];
        if (!gj) continue;
        const mean = sim[i]![j]! / (gi.length * gj.length);
        if (mean > best) {
          best = mean;
          bi = i;
          bj = j;
        }
      }
    }
    if (bi < 0 || best < threshold) break;
    const gi = groups[bi]!;
    const gj = groups[bj]!;
    for (let k = 0; k < count; k++) {
      if (k === bi || k === bj || !groups[k]) continue;
      const total = sim[bi]![k]! + sim[bj]![k]!;
      sim[bi]![k] = total;
      sim[k]![bi] = total;
    }
    groups[bi] = [...gi, ...gj];
    groups[bj] = null;
  }
  return groups.filter((g): g is number[] => g !== null);
}
