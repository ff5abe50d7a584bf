import type { GoldIssue } from "./data/convert.js";

/** Answers on labelled issues through the service (filled in by the answers work). */
export async function answerSection(_issues: GoldIssue[], _databaseUrl: string, log: (line?: string) => void) {
  log("4. Answers: not measured yet");
  return { targets: [] as string[] };
}
