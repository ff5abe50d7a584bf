import { describe, expect, it } from "vitest";
import { CUE_FAMILIES, cueKindOf, kindFeatures } from "../../src/insights/enrichment/feedback-kind/features.js";
import { classifySource, classProbabilities, kindModel, SOURCE_CLASSES } from "../../src/insights/enrichment/feedback-kind/model.js";

const BUG_ISSUE = {
  title: "Crash when opening a project with a symlinked config directory",
  body: `### Describe the bug

The editor crashes on start-up as soon as the config directory is a symlink.

### Steps to reproduce

1. \`ln -s ~/dotfiles/widget ~/.config/widget\`
2. Run \`widget open .\`

### Expected behaviour

The project opens.

### Actual behaviour

\`\`\`
thread 'main' panicked at 'called \`Result::unwrap()\` on an \`Err\` value: Os { code: 2, kind: NotFound }', src/config.rs:88:14
stack backtrace:
   0: rust_begin_unwind
   1: core::panicking::panic_fmt
   2: widget::config::load
   3: widget::main
\`\`\`

### Environment

- OS: Ubuntu 22.04
- widget 0.9.2
`,
};

const QUESTION_ISSUE = {
  title: "How do I change the default port?",
  body: "I'm trying to run the server on port 8080 instead of 3000 but I can't find where it is set. Is there a way to configure it, or do I have to pass a flag every time? Thanks for any help.",
};

const FEATURE_ISSUE = {
  title: "Please add support for YAML config files",
  body: "It would be great if the tool could read its settings from a YAML file as well as TOML. Many of our projects already keep their configuration in YAML, and it would be nice to have an option to point the tool at one.",
};

describe("feedback-kind model", () => {
  it("loads the committed model: four classes, one weight per class for every feature", () => {
    const model = kindModel();
    expect(model.classes).toEqual([...SOURCE_CLASSES]);
    expect(model.bias).toHaveLength(SOURCE_CLASSES.length);
    const names = Object.keys(model.weights);
    expect(names.length).toBeGreaterThan(1000);
    for (const name of names.slice(0, 500)) expect(model.weights[name]).toHaveLength(SOURCE_CLASSES.length);
    // The cue families are in it, each weighing towards the kind it names.
    const cues = names.filter((n) => cueKindOf(n) !== undefined && !n.includes("|"));
    expect(cues.length).toBeGreaterThan(CUE_FAMILIES.length);
    for (const name of cues) {
      const w = model.weights[name]!;
      const k = model.classes.indexOf(cueKindOf(name)!);
      expect(w.indexOf(Math.max(...w))).toBe(k);
    }
  });

  it("reads a bug-template issue with a stack trace as a bug", () => {
    expect(classifySource(BUG_ISSUE.title, BUG_ISSUE.body).kind).toBe("bug");
  });

  it('reads a "How do I …?" issue as a question', () => {
    expect(classifySource(QUESTION_ISSUE.title, QUESTION_ISSUE.body).kind).toBe("question");
  });

  it('reads a "Please add support for X" issue as a feature request', () => {
    expect(classifySource(FEATURE_ISSUE.title, FEATURE_ISSUE.body).kind).toBe("feature");
  });

  it("reads untitled reviews: a crash as a bug, a wish as a feature request", () => {
    expect(classifySource("", "Crashes every time I open it").kind).toBe("bug");
    expect(classifySource("", "Would be great to have a dark mode").kind).toBe("feature");
  });

  it("reads as the trained model scores: one lookup per feature gives the probabilities of every feature and its copy", () => {
    const model = kindModel();
    for (const [title, body] of [
      [BUG_ISSUE.title, BUG_ISSUE.body],
      [QUESTION_ISSUE.title, QUESTION_ISSUE.body],
      [FEATURE_ISSUE.title, FEATURE_ISSUE.body],
      ["", "Crashes every time I open it"],
      ["", "Please add a dark mode, it would be five stars"],
      ["", ""],
    ] as const) {
      const expected = classProbabilities(model, kindFeatures(title, body));
      const { probabilities } = classifySource(title, body);
      for (const [i, c] of model.classes.entries()) expect(probabilities[c]).toBeCloseTo(expected[i]!, 12);
    }
  });

  it("is deterministic, and its probabilities sum to 1", () => {
    for (const [title, body] of [
      [BUG_ISSUE.title, BUG_ISSUE.body],
      [QUESTION_ISSUE.title, QUESTION_ISSUE.body],
      [FEATURE_ISSUE.title, FEATURE_ISSUE.body],
      ["", "Crashes every time I open it"],
      ["", "Love it, use it every day."],
      ["", ""],
    ] as const) {
      const first = classifySource(title, body);
      expect(classifySource(title, body)).toEqual(first);
      const p = Object.values(first.probabilities);
      expect(p).toHaveLength(SOURCE_CLASSES.length);
      for (const x of p) expect(x).toBeGreaterThanOrEqual(0);
      expect(p.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 9);
    }
  });

  it("names cue families by where they were found and the kind they mark", () => {
    const features = kindFeatures("Is it possible to export as CSV?", "The app keeps crashing after the latest update.");
    expect(features.get("cue:t:question.possible")).toBe(1);
    expect(features.get("shape:title_question")).toBe(1);
    expect(features.get("cue:b:bug.keeps")).toBe(1);
    expect(features.get("cue:b:bug.regression")).toBe(1);
    expect(features.get("titled|cue:t:question.possible")).toBe(1);
    expect(kindFeatures("", "Crashes every time I open it").get("untitled|cue:b:bug.crash")).toBe(1);
    expect(cueKindOf("cue:b:feature.wish")).toBe("feature");
    expect(cueKindOf("shape:title_question")).toBe("question");
    expect(cueKindOf("t:crash")).toBeUndefined();
  });
});
