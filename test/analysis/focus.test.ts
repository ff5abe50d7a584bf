import { describe, expect, it } from "vitest";
import { askOf, questionIntent } from "../../src/insights/analysis/question.js";

/** What a question asks for, and the capability a request names. */
describe("focused questions", () => {
  it.each([
    ["Which features do users request most?", "requests"],
    ["What do users want next?", "requests"],
    ["What bugs do users report most?", "bugs"],
    ["What broke in the latest release?", "updates"],
    ["Why do users give up or switch?", "churn"],
    ["Why do customers cancel?", "churn"],
    ["What do users like compared with alternatives?", "comparison"],
    ["How is the onboarding experience?", "onboarding"],
    ["What do people praise and complain about?", null],
    ["What do users think about Acme pricing?", null],
  ] as const)("%s → %s", (question, ask) => {
    expect(askOf(question)).toBe(ask);
  });

  it("takes no aspect from the words that ask, and no onboarding focus beside other aspects", () => {
    expect(questionIntent("What bugs do users report most?").aspects).toEqual([]);
    expect(questionIntent("What bugs do users report most?").topicTerms).toEqual([]);
    expect(questionIntent("How do people feel about onboarding and support?")).toMatchObject({
      aspects: ["onboarding", "support"],
      ask: null,
    });
  });
});
