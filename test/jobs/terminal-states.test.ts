import { describe, expect, it } from "vitest";
import { TERMINAL_STATES } from "../../src/jobs/events.js";
import { isLive, isTerminal, JOB_STATES, TRANSITIONS } from "../../src/jobs/states.js";

/** Terminal states are final: the state machine has no edge out of them (a retry is a new attempt, a new row). */
describe("the job state machine", () => {
  it("has no edge out of a terminal state", () => {
    for (const state of [...TERMINAL_STATES, "blocked"] as const) {
      expect(TRANSITIONS[state], state).toEqual([]);
      expect(isTerminal(state), state).toBe(true);
    }
  });

  it("moves live states only, and never back from an end", () => {
    for (const state of JOB_STATES) expect(isTerminal(state) || isLive(state), state).toBe(true);
    expect(isTerminal("queued")).toBe(false);
    expect(isTerminal("running")).toBe(false);
    expect(isTerminal("toString")).toBe(false);
    expect(isTerminal("stalled")).toBe(false);
  });
});
