import { html } from "./html.js";
import { page } from "./layout.js";

/**
 * What any share link that does not open a page gets. It says the same thing whether the token
 * expired, was revoked or never existed, so guessing tokens tells nobody which ones were real.
 */
export function renderNotFoundPage(): string {
  const body = html`<h1>This link is not valid</h1>
<p>The page you tried to open cannot be shown. If someone shared this link with you, ask them for a new one.</p>
`;
  return page({ title: "This link is not valid", kind: "Shared view", body });
}

/** What a client that opened too many shared pages this minute gets (429, with Retry-After). */
export function renderTooManyRequestsPage(retryAfterSeconds: number): string {
  const body = html`<h1>Too many requests</h1>
<p>This address opened more shared pages than allowed in a minute. Try again in ${String(retryAfterSeconds)} seconds.</p>
`;
  return page({ title: "Too many requests", kind: "Shared view", body });
}
