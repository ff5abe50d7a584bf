import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createBulkEmbedder } from "../../src/insights/embed/provider.js";
import { kindFromLabels, kindOfLabel, labelNames } from "../../src/insights/enrichment/feedback-kind/labels.js";
import { classifySource } from "../../src/insights/enrichment/feedback-kind/model.js";
import { reanalyseContent } from "../../src/insights/enrichment/reanalyse.js";
import { enrichContent } from "../../src/insights/enrichment/service.js";
import { createTenant, storedKinds, storeSources, type Tenant } from "../analysis/fixtures.js";
import { createHarness, type Harness } from "../helpers/harness.js";

/**
 * An issue tracker's labels decide an original's feedback kind when they name one: the maintainers' triage
 * beats the model's reading of the text. Labels that name no kind, or two different kinds, leave it to the model.
 */
describe("kinds named by tracker labels", () => {
  it("reads the spellings trackers use, with their namespaces, case, punctuation and emoji", () => {
    const read = (names: string[]) => names.map(kindOfLabel);
    expect(
      read(["bug", "Bug", "type: bug", "kind/bug", "C-bug", "Type: Bug 🐛", "Issue-Bug", "regression", "confirmed bug", ":bug: bug"]),
    ).toEqual(Array(10).fill("bug_report"));
    expect(
      read([
        "enhancement",
        "Feature Request",
        "type:feature",
        "kind/feature",
        "C-feature-request",
        "✨ new feature",
        ":sparkles: enhancement",
      ]),
    ).toEqual(Array(7).fill("feature_request"));
    expect(read(["question", "Questions and Help", "Questions & Help", "kind/support", "usage question", "❓ question"])).toEqual(
      Array(6).fill("question"),
    );
  });

  it("names no kind for labels about something else, even when they share a word with one", () => {
    for (const name of [
      "help wanted",
      "good first issue",
      "area: auth",
      "priority: high",
      "needs triage",
      "bug bounty",
      "feature flag",
      "T-compiler",
      "pull request",
      "wontfix",
      "duplicate",
      "documentation",
      "",
      `bug${" x".repeat(40)}`,
    ]) {
      expect(kindOfLabel(name), name).toBeNull();
    }
  });

  it("decides only when the labels name one kind", () => {
    expect(kindFromLabels(["area: sync", "type: bug", "Bug"])).toBe("bug_report");
    expect(kindFromLabels(["help wanted", "enhancement"])).toBe("feature_request");
    expect(kindFromLabels(["bug", "enhancement"])).toBeNull();
    expect(kindFromLabels(["help wanted", "good first issue"])).toBeNull();
    expect(kindFromLabels([])).toBeNull();
  });

  it("reads label names from the API's objects or plain strings, and ignores anything else", () => {
    expect(labelNames([{ id: 1, name: "bug", color: "d73a4a" }, "question", { id: 2 }, 7, null, { name: "  " }])).toEqual([
      "bug",
      "question",
    ]);
    expect(labelNames({ name: "bug" })).toEqual([]);
    expect(labelNames(null)).toEqual([]);
    expect(labelNames(Array(150).fill("bug"))).toHaveLength(100);
  });
});

describe("enrichment with stored labels", () => {
  let h: Harness;
  let tenant: Tenant;
  // The model reads this text as a feature request (checked below), so a label that says otherwise shows.
  const WISH = {
    title: "Please add support for YAML config files",
    content: "It would be great if the tool could read its settings from a YAML file as well as TOML. Please add an option for it.",
  };

  beforeAll(async () => {
    h = await createHarness();
    tenant = await createTenant(h);
  });
  afterAll(() => h.close());

  /** What the model alone stores for a text: its kind and its probability, to four decimals. */
  const modelReading = (content: string) => {
    const guess = classifySource(WISH.title, content);
    expect(guess.kind).toBe("feature");
    return ["feature_request", Math.round(guess.probabilities.feature * 1e4) / 1e4];
  };
  const kinds = (ids: string[]) => storedKinds(h, ids);

  it("stores the kind the labels name, with confidence 1, and the model's kind otherwise", async () => {
    const ids = await storeSources(h, tenant, [
      { platform: "github", ...WISH, metadata: { repository: "acme/sdk", labels: [{ name: "area: config" }, { name: "type: bug" }] } },
      { platform: "github", ...WISH, content: `${WISH.content} `, metadata: { labels: ["question"] } },
      { platform: "github", ...WISH, content: `${WISH.content}  `, metadata: { labels: ["bug", "enhancement"] } },
      { platform: "github", ...WISH, content: `${WISH.content}   `, metadata: { labels: ["help wanted"] } },
      { platform: "github", ...WISH, content: `${WISH.content}    `, metadata: { labels: "bug" } },
      { platform: "github", ...WISH, content: `${WISH.content}     ` },
      // A pull request labelled `bug` is a fix: its labels name no kind of it.
      {
        platform: "github",
        ...WISH,
        content: `${WISH.content}      `,
        metadata: { repository: "acme/sdk", pull_request: true, labels: ["bug"] },
      },
      { platform: "github", ...WISH, content: `${WISH.content}       `, metadata: { pull_request: false, labels: ["bug"] } },
    ]);
    await enrichContent(h.deps.pool, createBulkEmbedder(h.deps.config), ids);
    const stored = await kinds(ids);
    expect(stored.slice(0, 2)).toEqual([
      ["bug_report", 1],
      ["question", 1],
    ]);
    // Two kinds named, none named, labels that are not a list, no labels, a pull request: the model's reading and its probability.
    expect(stored.slice(2, 7)).toEqual([2, 3, 4, 5, 6].map((spaces) => modelReading(`${WISH.content}${" ".repeat(spaces)}`)));
    expect(stored[7]).toEqual(["bug_report", 1]);
  });

  it("keeps the labels' kind when the rows are analysed again", async () => {
    const ids = await storeSources(h, tenant, [
      { platform: "github", ...WISH, content: `${WISH.content} again`, metadata: { labels: ["kind/bug"] } },
      { platform: "github", ...WISH, content: `${WISH.content} once more` },
      { platform: "github", ...WISH, content: `${WISH.content} as a fix`, metadata: { pull_request: true, labels: ["kind/bug"] } },
    ]);
    await enrichContent(h.deps.pool, createBulkEmbedder(h.deps.config), ids);
    await h.deps.db.$executeRaw`DELETE FROM opinion_units WHERE content_id = ANY(${ids}::uuid[])`;
    await h.deps.db
      .$executeRaw`UPDATE content_enrichment SET feedback_kind = NULL, feedback_kind_confidence = NULL WHERE content_id = ANY(${ids}::uuid[])`;
    const result = await reanalyseContent(h.deps.pool, ids);
    expect(result.reanalysed).toBe(3);
    const stored = await kinds(ids);
    expect(stored).toEqual([["bug_report", 1], modelReading(`${WISH.content} once more`), modelReading(`${WISH.content} as a fix`)]);
  });
});
