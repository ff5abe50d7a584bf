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
