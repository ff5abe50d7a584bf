import { tokenize } from "../../src/insights/embed/hashing.js";

/** Spearman's rank correlation (ties take their mean rank). */
export function spearman(x: readonly number[], y: readonly number[]): number {
  const rx = ranks(x);
  const ry = ranks(y);
  return pearson(rx, ry);
}

function ranks(values: readonly number[]): number[] {
  const order = values.map((v, i) => [v, i] as const).sort((a, b) => a[0] - b[0]);
  const out = new Array<number>(values.length);
  for (let i = 0; i < order.length; ) {
    let j = i;
    while (j + 1 < order.length && order[j + 1]![0] === order[i]![0]) j++;
    const mean = (i + j) / 2 + 1;
    for (let k = i; k <= j; k++) out[order[k]![1]] = mean;
    i = j + 1;
  }
  return out;
}

function pearson(x: readonly number[], y: readonly number[]): number {
  const n = x.length;
  const mx = x.reduce((s, v) => s + v, 0) / n;
  const my = y.reduce((s, v) => s + v, 0) / n;
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let i = 0; i < n; i++) {
    const dx = x[i]! - mx;
    const dy = y[i]! - my;
    sxy += dx * dy;
    sxx += dx * dx;
    syy += dy * dy;
  }
  return sxy / Math.sqrt(sxx * syy);
}

export function dot(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
}

/** Sparse TF-IDF vectors (raw term frequency × (ln(N/df) + 1), L2-normalised) fitted on `docs`. */
export function tfidf(docs: readonly string[]): (text: string) => Map<string, number> {
  const df = new Map<string, number>();
  for (const d of docs) for (const w of new Set(tokenize(d))) df.set(w, (df.get(w) ?? 0) + 1);
  const n = docs.length;
  return (text) => {
    const tf = new Map<string, number>();
    for (const w of tokenize(text)) tf.set(w, (tf.get(w) ?? 0) + 1);
    let norm = 0;
    for (const [w, f] of tf) {
      const v = f * (Math.log(n / (df.get(w) ?? 1)) + 1);
      tf.set(w, v);
      norm += v * v;
    }
    norm = Math.sqrt(norm) || 1;
    for (const [w, v] of tf) tf.set(w, v / norm);
    return tf;
  };
}

export function sparseDot(a: Map<string, number>, b: Map<string, number>): number {
  const [small, large] = a.size < b.size ? [a, b] : [b, a];
  let s = 0;
  for (const [w, v] of small) s += v * (large.get(w) ?? 0);
  return s;
}

/** Okapi BM25 (k1 = 0.9, b = 0.4, Anserini's defaults) over `docs`: scores of every doc for a query. */
export function bm25(docs: readonly string[]): (query: string) => Float64Array {
  const k1 = 0.9;
  const b = 0.4;
  const postings = new Map<string, { doc: number; tf: number }[]>();
  const lengths = docs.map((d, i) => {
    const words = tokenize(d);
    const tf = new Map<string, number>();
    for (const w of words) tf.set(w, (tf.get(w) ?? 0) + 1);
    for (const [w, f] of tf) {
      const list = postings.get(w) ?? [];
      if (list.length === 0) postings.set(w, list);
      list.push({ doc: i, tf: f });
    }
    return words.length;
  });
  const avg = lengths.reduce((s, l) => s + l, 0) / Math.max(1, lengths.length);
  const n = docs.length;
  return (query) => {
    const scores = new Float64Array(n);
    for (const w of new Set(tokenize(query))) {
      const list = postings.get(w);
      if (!list) continue;
      const idf = Math.log(1 + (n - list.length + 0.5) / (list.length + 0.5));
      for (const { doc, tf } of list) scores[doc]! += (idf * tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * lengths[doc]!) / avg));
    }
    return scores;
  };
}

/** nDCG@k of a ranking (doc indices, best first) against graded relevance (doc index → grade). */
export function ndcgAt(k: number, ranking: readonly number[], relevant: ReadonlyMap<number, number>): number {
  let dcg = 0;
  for (let i = 0; i < Math.min(k, ranking.length); i++) {
    const g = relevant.get(ranking[i]!) ?? 0;
    if (g > 0) dcg += (2 ** g - 1) / Math.log2(i + 2);
  }
  const ideal = [...relevant.values()].sort((a, b) => b - a).slice(0, k);
  let idcg = 0;
  ideal.forEach((g, i) => {
    idcg += (2 ** g - 1) / Math.log2(i + 2);
  });
  return idcg === 0 ? 0 : dcg / idcg;
}

/** The indices of the `k` highest scores, best first. */
export function topK(scores: ArrayLike<number>, k: number): number[] {
  const idx = Array.from({ length: scores.length }, (_, i) => i);
  idx.sort((a, b) => scores[b]! - scores[a]! || a - b);
  return idx.slice(0, k);
}

export function percentile(samples: readonly number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}
