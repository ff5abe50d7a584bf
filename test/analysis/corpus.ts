import type { SourceInput } from "./fixtures.js";

/** A small corpus of opinions about one product, spread over several platforms. */
export const CORPUS: SourceInput[] = [
  {
    platform: "reddit",
    title: "Is Acme worth it?",
    content:
      "I tried Acme for a month. The pricing is way too expensive for a small team and I hate the per-seat model. The onboarding flow was smooth though.",
    published_at: "2026-03-01T10:00:00Z",
  },
  {
    platform: "reddit",
    title: "Acme pricing change",
    content: "Acme raised the pricing again. Terrible pricing decision, we are cancelling. Support was friendly about it.",
    published_at: "2026-03-05T10:00:00Z",
  },
  {
    platform: "twitter",
    content: "Honestly the Acme pricing is awful for startups 😞 but the dashboard is great!",
    published_at: "2026-03-06T10:00:00Z",
  },
  {
    platform: "github",
    title: "Billing page shows the wrong pricing",
    content: "The pricing page shows the old pricing tiers. Invoices are correct. Please fix the pricing table on the billing page.",
    published_at: "2026-02-20T10:00:00Z",
  },
  {
    platform: "web",
    title: "Acme review",
    content:
      "Acme is a solid product with excellent support. The onboarding flow is the best I have seen. Pricing is high but fair for larger companies.",
    published_at: "2026-01-10T10:00:00Z",
  },
  {
    platform: "hackernews",
    content: "Acme support answered my ticket within minutes, which was wonderful. The pricing discussion here seems overblown.",
    published_at: "2026-01-12T10:00:00Z",
  },
  {
    platform: "meetingnotes",
    title: "Customer call transcript",
    content: "Customer: The pricing is the main blocker for our renewal. Customer: We love the onboarding flow.",
    published_at: "2026-03-07T10:00:00Z",
  },
];

/** A meeting summary stored as knowledge: never quotable, whatever it says. */
export const SUMMARY_TEXT = "Summary: the customer said pricing is unacceptable and they will churn because of pricing.";
