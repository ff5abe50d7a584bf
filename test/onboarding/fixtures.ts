import { randomUUID } from "node:crypto";

/** A complete onboarding body; tests override what they exercise. */
export function onboardingBody(overrides: Record<string, unknown> = {}) {
  return {
    request_id: randomUUID(),
    company: {
      name: "Acme Analytics",
      url: "https://acme.example.com",
      keywords: ["acme", "analytics"],
      collection_targets: { subreddits: ["analytics"] },
      platforms: ["reddit", "hackernews"],
    },
    products: [{ name: "Acme Dash", url: "https://acme.example.com/dash", keywords: ["dashboards"] }],
    competitors: [{ name: "Globex", url: "https://globex.example.com", keywords: ["globex"] }],
    research_objectives: [
      { id: "churn", title: "Why do customers churn?", question: "What makes teams leave?", decision: "Roadmap", evidence: "Posts" },
    ],
    source_intent: ["Cursor", "Claude Code"],
    collection_mode: "agent",
    ...overrides,
  };
}

export const named = (prefix: string, n: number) =>
  Array.from({ length: n }, (_, i) => ({ name: `${prefix} ${i + 1}`, url: `https://${prefix.toLowerCase()}${i + 1}.example.com` }));

export const words = (n: number) => Array.from({ length: n }, (_, i) => `keyword-${i + 1}`);
