import type { SourceInput } from "./fixtures.js";

/**
 * Twelve posts about a notes app: three sync failures, three pricing complaints, a crash,
 * a missing search feature, a wish for a web clipper, and praise for the editor, offline
 * mode and support.
 */
export const NOTES_APP: SourceInput[] = [
  { platform: "reddit", content: "Sync keeps failing on my Android phone, I lose edits every time I switch devices." },
  { platform: "reddit", content: "The sync conflict dialog is confusing. I never know which version it will keep." },
  { platform: "twitter", content: "Acme Notes sync took 20 minutes this morning. Unacceptable for a notes app." },
  { platform: "reddit", content: "They went from $4 to $10 a month overnight. I'm looking at alternatives." },
  { platform: "hackernews", content: "Ten dollars a month is too expensive for a note-taking app." },
  { platform: "twitter", content: "The new price is steep for what you get." },
  { platform: "github", content: "The app crashes every time I open a large notebook on my iPad." },
  { platform: "reddit", content: "Search doesn't look inside PDF attachments, so half my notes are invisible." },
  { platform: "web", content: "I'd really like a web clipper for Chrome, please add one." },
  { platform: "twitter", content: "I love the editor, it's fast and the markdown shortcuts just work." },
  { platform: "reddit", content: "Offline mode is fantastic, I wrote notes for a whole flight without a hitch." },
  { platform: "web", content: "Their support team answered my question within an hour and fixed my account." },
];

export const NOTES_APP_QUESTION = "What are the biggest complaints about Acme Notes and what do people like?";
