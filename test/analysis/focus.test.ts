import { describe, expect, it } from "vitest";
import { requestedCapability } from "../../src/insights/analysis/focus.js";
import { askOf, questionIntent } from "../../src/insights/analysis/question.js";

/** What a question asks for, and the capability a request names. */
describe("focused questions", () => {
  it.each([
    ["Which features do users request most?", "requests"],
    ["What do users want next?", "requests"],
    ["What bugs do users report most?", "bugs"],
    ["What broke in the latest release?", "bugs"],
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

describe("the capability a request names", () => {
  it.each([
    ["Could you add PDF export?", "PDF export"],
    ["Please allow us to sync tags across devices so I can work offline", "sync tags across devices"],
    ["I wish it had recurring reminders.", "recurring reminders"],
    ["It would be nice to have a dark mode", "dark mode"],
    ["Add support for Python 3.12", "Python 3.12"],
    ["I'd really like a web clipper for Chrome, please add one.", "web clipper for Chrome"],
    ["Please fix this", null],
    ["It would be nice to be able to filter by date", "filter by date"],
    ["Possibility to export the view state", "export the view state"],
    ["I want to get the", null],
  ] as const)("%s", (text, capability) => {
    expect(requestedCapability(text)).toBe(capability);
  });
});
