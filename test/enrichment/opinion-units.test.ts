import { describe, expect, it } from "vitest";
import { type OpinionSpan, opinionUnits, sentenceSpans, sliceCodePoints } from "../../src/insights/enrichment/opinions.js";

/**
 * Opinion units without a database: clauses, their polarity and kind, their aspect, and
 * offsets that give back the text exactly.
 */
const units = (text: string) => {
  const found = opinionUnits(text);
  for (const u of found) expect(sliceCodePoints(text, u.start, u.end)).toBe(u.text);
  return found;
};
const only = (text: string): OpinionSpan => {
  const found = units(text);
  expect(found, JSON.stringify(found)).toHaveLength(1);
  return found[0]!;
};
const brief = (u: OpinionSpan) => ({ text: u.text, aspect: u.aspect, label: u.label, kind: u.kind });

describe("clauses and contrast", () => {
  it("splits at a contrast and gives each side its own aspect and polarity", () => {
    expect(units("great food but rude staff").map(brief)).toEqual([
      { text: "great food", aspect: "food", label: "positive", kind: "opinion" },
      { text: "rude staff", aspect: "service", label: "negative", kind: "opinion" },
    ]);
    expect(units("Honestly the Acme pricing is awful for startups 😞 but the dashboard is great!").map(brief)).toEqual([
      { text: "Honestly the Acme pricing is awful for startups 😞", aspect: "pricing", label: "negative", kind: "opinion" },
      { text: "the dashboard is great!", aspect: "dashboard", label: "positive", kind: "opinion" },
    ]);
  });

  it("splits at semicolons, at a leading 'although' and between opposite opinions joined by 'and'", () => {
    expect(units("The battery life is amazing; the screen is too dim.").map(brief)).toEqual([
      { text: "The battery life is amazing", aspect: "battery", label: "positive", kind: "opinion" },
      { text: "the screen is too dim.", aspect: "display", label: "negative", kind: "opinion" },
    ]);
    expect(units("Although the app is pricey, the support is great.").map((u) => [u.aspect, u.label])).toEqual([
      ["pricing", "negative"],
      ["support", "positive"],
    ]);
    expect(units("Great food and rude staff.").map((u) => [u.text, u.aspect, u.label])).toEqual([
      ["Great food", "food", "positive"],
      ["rude staff.", "service", "negative"],
    ]);
  });

  it("keeps a sentence whole when a side would be a fragment, or both sides agree", () => {
    expect(only("The onboarding flow was smooth though.")).toMatchObject({
      text: "The onboarding flow was smooth though.",
      label: "positive",
    });
    expect(only("I love the new onboarding flow, it is wonderful!")).toMatchObject({ aspect: "onboarding", label: "positive" });
    expect(only("The pricing is awful and I hate it.")).toMatchObject({ aspect: "pricing", label: "negative" });
  });

  it("cuts sentences as Unicode's segmenter does, whether or not a stretch holds a character that may end one", () => {
    const segmenter = new Intl.Segmenter("en", { granularity: "sentence" });
    const bySegmenter = (text: string) =>
      [...segmenter.segment(text)]
        .map((s) => ({ start: s.index + (s.segment.length - s.segment.trimStart().length), end: s.index + s.segment.trimEnd().length }))
        .filter((s) => /[\p{L}\p{N}]/u.test(text.slice(s.start, s.end)));
    for (const text of [
      "Sync keeps failing on my phone",
      "  Export to PDF, please  ",
      "tabs\tand (brackets) [1] {2} #3 @me ~/path * a+b=c; x: y",
      "It crashed. Then it worked",
      "Really? Yes!",
      "Line one\nline two",
      "v1\u2029v2",
      "Price ¥500 and 10 € and naïve café",
      "第一句。第二句",
      "Wait\u2026 it froze",
    ])
      expect(sentenceSpans(text), text).toEqual(bySegmenter(text));
  });

  it("keeps code-point offsets exact around emoji", () => {
    const text = "🚀🚀 Launch day! The new pricing page 🎉 looks clean but sync 💥 is broken.";
    const found = units(text);
    expect(found.map((u) => u.text)).toEqual(["🚀🚀 Launch day!", "The new pricing page 🎉 looks clean", "sync 💥 is broken."]);
    expect(found[1]!.start).toBe(Array.from(text).indexOf("T"));
  });
});

describe("clause polarity", () => {
  it.each([
    ["It doesn't work.", "negative"],
    ["Not worth the money.", "negative"],
    ["Not bad at all.", "positive"],
    ["Not a fan of the new layout.", "negative"],
    ["No crashes so far!", "positive"],
    ["Offline mode worked for a whole flight without a hitch.", "positive"],
    ["Check-in took forever and nobody at the front desk seemed to care.", "negative"],
  ])("negation: %s → %s", (text, label) => {
    expect(units(text).map((u) => u.label)).toEqual([label]);
  });

  it.each([
    ["Sync keeps failing on my Android phone, I lose edits every time I switch devices.", "sync"],
    ["The app crashes every time I open a large notebook.", "stability"],
    ["Ten dollars a month is too expensive for a note-taking app.", "pricing"],
    ["The new price is steep for what you get.", "pricing"],
    ["They went from $4 to $10 a month overnight.", "pricing"],
    ["The sync conflict dialog is confusing.", "sync"],
    ["Search doesn't look inside PDF attachments.", "search"],
    ["Missing tags is a dealbreaker for me.", null],
    ["Sync took 20 minutes, unacceptable.", "sync"],
    ["The dashboard loads slowly on mobile.", "dashboard"],
  ])("product cues read as complaints: %s", (text, aspect) => {
    const [first] = units(text);
    expect(first?.label).toBe("negative");
    // A complaint that names a failure ("crashes", "keeps failing") describes a defect.
    expect(first?.kind).toBe(/crash|fail/.test(text) ? "bug" : "opinion");
    if (aspect) expect(first!.aspect).toBe(aspect);
  });

  it("intensifiers strengthen and downtoners soften", () => {
    const plain = only("The editor is good.").sentiment;
    expect(only("The editor is really good.").sentiment).toBeGreaterThan(plain);
    expect(only("The editor is slightly good.").sentiment).toBeLessThan(plain);
    expect(only("The editor is slightly good.").sentiment).toBeGreaterThan(0);
  });

  it("praise for support without a single generic opinion word still reads as praise", () => {
    expect(only("Their support team answered my question within an hour and fixed my account.")).toMatchObject({
      aspect: "support",
      label: "positive",
    });
  });
});

describe("requests", () => {
  it.each([
    ["I wish it had a web clipper.", "web clipper"],
    ["I'd really like a web clipper for Chrome, please add one.", "web clipper"],
    ["Please add a calendar view.", "calendar view"],
    ["It would be nice if export supported PDF.", "import and export"],
    ["Would be great if the app supported Apple Watch.", "apple watch"],
    ["The mobile app needs a dark mode.", "mobile app"],
    ["Can you please add two-factor authentication?", "privacy and security"],
  ])("%s is a feature request about %s, never praise", (text, aspect) => {
    expect(only(text)).toMatchObject({ kind: "request", label: "neutral", sentiment: 0, aspect });
  });

  it("an opinion and a request in one sentence become two units", () => {
    expect(units("The editor is great, I wish it had tables.").map((u) => [u.aspect, u.kind, u.label])).toEqual([
      ["editor", "opinion", "positive"],
      ["table", "request", "neutral"],
    ]);
  });

  it("is not fooled by what only looks like a wish", () => {
    expect(only("I love the editor.")).toMatchObject({ kind: "opinion", label: "positive" });
    expect(only("I can't wait for the next release.")).toMatchObject({ kind: "opinion", label: "positive" });
    expect(only("Needs a lot of work before it is usable.")).toMatchObject({ kind: "opinion", label: "negative" });
  });
});

describe("aspects", () => {
  it("never names a stop word, an opinion word or a pronoun an aspect", () => {
    for (const text of ["Love it!", "I like it a lot.", "I'm looking at alternatives.", "Meh.", "Five stars."]) {
      for (const u of units(text)) expect(["overall", null]).toContain(u.aspect);
    }
  });

  it("a clause that names nothing judges what the previous clause on its line named", () => {
    expect(units("Acme Notes sync took 20 minutes this morning. Unacceptable for a notes app.").map((u) => [u.aspect, u.label])).toEqual([
      ["sync", "negative"],
      ["sync", "negative"],
    ]);
    expect(units("They went from $4 to $10 a month. I'm looking at alternatives.").map((u) => u.aspect)).toEqual(["pricing", "pricing"]);
    // Nothing carries over a line break, or past a verdict on the whole product.
    expect(units("Sync is slow.\nLove it!").map((u) => u.aspect)).toEqual(["sync", "overall"]);
    expect(units("The dashboard loads slowly. Would recommend to a friend.").map((u) => u.aspect)).toEqual(["dashboard", "overall"]);
  });

  it("groups what names an aspect under one canonical name", () => {
    const aspectOf = (text: string) => units(text)[0]!.aspect;
    for (const text of [
      "The price is too high.",
      "Pricing is confusing.",
      "$10 a month is a lot.",
      "Ten dollars is steep.",
      "Way too expensive.",
      "Overpriced for what it does.",
      "The subscription cost keeps going up.",
    ])
      expect(aspectOf(text), text).toBe("pricing");
    for (const text of ["It crashes constantly.", "The app keeps crashing.", "It freezes when I scroll.", "So many bugs."])
      expect(aspectOf(text), text).toBe("stability");
    expect(aspectOf("The quality of the food was excellent.")).toBe("food");
    expect(aspectOf("Customer service was slow to respond.")).toBe("support");
  });

  it("lists every aspect a unit names, best first", () => {
    expect(only("The app crashes every time I open a large notebook on my iPad.").terms).toEqual(["stability", "notebook", "ipad"]);
  });
});

describe("what a clause is about, against the words around it", () => {
  it("a label opening a post ('Quick note:', 'Update:') is neither an aspect nor an opinion", () => {
    expect(only("Quick note: syncing between devices never loses anything.")).toMatchObject({ aspect: "sync", terms: ["sync"] });
    expect(only("Update: the search is slow.")).toMatchObject({ aspect: "search", label: "negative" });
    expect(only("Side thought: the checkout flow confused me.").terms).not.toContain("performance");
    expect(only("Quick question: does the hotel have parking?").label).toBe("neutral");
  });

  it("a quality a cue implies gives way to the thing the clause names as its subject", () => {
    expect(only("The editor lags on long documents.").aspect).toBe("editor");
    expect(only("The dashboard is slow to load.").aspect).toBe("dashboard");
    expect(only("The waiter was quick and friendly.").aspect).not.toBe("performance");
    // With nothing else named (or only an object), the cue's quality is the aspect.
    expect(only("It runs fast.").aspect).toBe("performance");
    expect(only("It freezes whenever I attach a photo.").aspect).toBe("stability");
  });

  it.each([
    ["After three months the unit will no longer charge.", "negative"],
    ["The sync no longer works on my phone.", "negative"],
    ["Battery could last longer.", "negative"],
    ["The speakers could be louder.", "negative"],
    ["The export dialog needs to be redesigned.", "negative"],
    ["The touchpad is non-functioning.", "negative"],
    ["The keys are popping off.", "negative"],
    ["The case is coming apart.", "negative"],
    ["The thermostat had no effect.", "negative"],
    ["It is not what I wanted.", "negative"],
    ["This laptop does all I need it to do.", "positive"],
    ["Exactly what we needed for the team.", "positive"],
    ["Two blocks from the station for that price is hard to beat.", "positive"],
    ["I can't remember a better night's sleep.", "positive"],
  ])("reads what product reviews say without opinion words: %s → %s", (text, label) => {
    expect(only(text).label).toBe(label);
  });

  it("starting or loading at once is praise, crashing at once is not", () => {
    expect(only("The desktop app starts instantly.").label).toBe("positive");
    expect(only("The page loads immediately.").label).toBe("positive");
    expect(only("The app crashes instantly.").label).toBe("negative");
  });
});

describe("the word lists behind clause polarity", () => {
  it("rates judging words wink-nlp's list leaves out from VADER's lexicon, but not nouns in their everyday sense", () => {
    // "appreciative" and "brilliantly" are rated by VADER only.
    expect(only("The staff were appreciative of our patience.").label).toBe("positive");
    expect(only("The new release runs brilliantly.").label).toBe("positive");
    expect(only("The hotel handled the complaint appallingly.").label).toBe("negative");
    // VADER rates "attachment" as affection; in feedback it is a file.
    expect(only("Search doesn't look inside PDF attachments.").label).toBe("negative");
  });
});

describe("words that are also JavaScript's own object members", () => {
  it("reads 'constructor', 'toString' and 'valueOf' as words, never as a NaN valence", () => {
    const texts = [
      "In particular, I like that I don't have to implement constructors.",
      "The toString output is great.",
      "The valueOf call is terribly slow.",
      "hasOwnProperty checks fail on every constructor.",
    ];
    const units = texts.flatMap((t) => opinionUnits(t));
    expect(units.length).toBeGreaterThanOrEqual(texts.length);
    for (const u of units) expect(Number.isFinite(u.sentiment), `${u.text}: ${u.sentiment}`).toBe(true);
    expect(units.find((u) => u.text.includes("constructors"))?.label).toBe("positive");
    expect(units.find((u) => u.text.includes("toString"))?.label).toBe("positive");
    expect(units.find((u) => u.text.includes("valueOf"))?.label).toBe("negative");
  });
});
