import { mulberry32 } from "../recall/corpus.js";

/**
 * A synthetic product-feedback corpus for the analysis scale benchmark: short posts in
 * plain English, each about one to three aspects of a product with a clear polarity, in
 * the proportions a real feedback stream has (a few frequent aspects, a long tail). The
 * texts are generated from a seeded generator, so every run stores the same corpus.
 */
const ASPECTS: { names: string[]; praise: string[]; complaint: string[]; weight: number }[] = [
  {
    names: ["sync", "syncing between devices", "the sync"],
    praise: ["works flawlessly", "is fast and reliable", "never loses anything"],
    complaint: ["keeps failing on my phone", "loses my edits", "takes forever"],
    weight: 9,
  },
  {
    names: ["the price", "the subscription", "pricing"],
    praise: ["is fair for what you get", "is a bargain", "is reasonable"],
    complaint: ["is way too expensive", "went up again and is steep", "is not worth it anymore"],
    weight: 8,
  },
  {
    names: ["the editor", "the writing experience", "the markdown editor"],
    praise: ["is a joy to use", "is clean and fast", "is the best I have tried"],
    complaint: ["is clunky", "lags on long documents", "is confusing"],
    weight: 7,
  },
  {
    names: ["support", "the support team", "customer service"],
    praise: ["answered within an hour", "was friendly and helpful", "solved my problem quickly"],
    complaint: ["never answered my ticket", "was rude", "took a week to reply"],
    weight: 6,
  },
  {
    names: ["the app", "the iPad app", "the desktop app"],
    praise: ["is rock solid", "feels polished", "starts instantly"],
    complaint: ["crashes on startup", "freezes when I open a large note", "keeps crashing after the update"],
    weight: 6,
  },
  {
    names: ["search", "the search", "full-text search"],
    praise: ["finds everything instantly", "is excellent", "is accurate"],
    complaint: ["misses notes I know exist", "is slow", "cannot search inside PDFs"],
    weight: 5,
  },
  {
    names: ["offline mode", "working offline"],
    praise: ["is a lifesaver on flights", "works great", "is reliable"],
    complaint: ["is broken", "drops my changes", "never syncs back"],
    weight: 4,
  },
  {
    names: ["the web clipper", "the browser extension"],
    praise: ["saves me hours", "is handy", "works on every site"],
    complaint: ["breaks on half the sites", "is missing basic options", "is buggy"],
    weight: 3,
  },
  {
    names: ["battery life", "battery usage"],
    praise: ["is barely affected", "is fine"],
    complaint: ["drains my battery", "is terrible with the app open"],
    weight: 2,
  },
  {
    names: ["onboarding", "the setup"],
    praise: ["took two minutes", "was painless"],
    complaint: ["was confusing", "took far too long"],
    weight: 2,
  },
];
/** A seeded generator (Mulberry32), so every run stores the same corpus. */
export const seeded = mulberry32;

const OPENERS = ["", "Honestly, ", "After a year of daily use, ", "Quick note: ", "Update: ", "I have to say ", "FWIW "];
const CLOSERS = ["", " Would recommend.", " Not sure I will renew.", " Thanks for listening.", " Please fix this.", " Five stars."];
const WISHES = [
  "I wish it had a dark mode.",
  "Please add tags for notebooks.",
  "It would be nice if export supported Word.",
  "Would love a calendar integration.",
];

const totalWeight = ASPECTS.reduce((n, a) => n + a.weight, 0);

export function feedbackPost(rand: () => number, product: string): { title: string; content: string } {
  const pick = <T>(list: T[]): T => list[Math.floor(rand() * list.length)] as T;
  const aspect = () => {
    let r = rand() * totalWeight;
    for (const a of ASPECTS) {
      r -= a.weight;
      if (r <= 0) return a;
    }
    return ASPECTS[0] as (typeof ASPECTS)[number];
  };
  const sentences: string[] = [];
  const count = 1 + Math.floor(rand() * 3);
  for (let i = 0; i < count; i++) {
    const a = aspect();
    const praise = rand() < 0.45;
    const name = pick(a.names);
    const subject = i === 0 ? `${pick(OPENERS)}${name.startsWith("the ") ? `${product}'s ${name.slice(4)}` : name}` : name;
    const clause = `${subject} ${pick(praise ? a.praise : a.complaint)}.`;
    sentences.push(clause.charAt(0).toUpperCase() + clause.slice(1));
  }
  if (rand() < 0.12) sentences.push(pick(WISHES));
  const content = `${sentences.join(" ")}${pick(CLOSERS)}`;
  return { title: content.slice(0, 60), content };
}
