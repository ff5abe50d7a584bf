import { createHash } from "node:crypto";

/**
 * The shared pages' only stylesheet, served from our own origin (the CSP allows `style-src 'self'`
 * and nothing inline). No web fonts and no third-party assets: a shared link must not tell anyone
 * else that it was opened.
 *
 * Contrast (WCAG 2.1 relative luminance), every pair the pages use:
 *   text    #1f2328 on #ffffff 15.80:1, on #f6f8fa 14.84:1, on mark #fff3b0 14.07:1, on target #fff8c5 14.66:1
 *   muted   #57606a on #ffffff  6.39:1, on #f6f8fa 6.00:1
 *   link    #0550ae on #ffffff  7.59:1, on #f6f8fa 7.13:1, on #fff8c5 7.05:1, on #fff3b0 6.76:1 (also the focus ring)
 *   target  border #9a6700 on #fff8c5 4.52:1, on #ffffff 4.87:1
 * Chart marks against the white chart background (non-text, needs 3:1):
 *   complaint #b8500b 5.01:1, praise #00805d 4.95:1, request #0072b2 5.19:1,
 *   neutral #6e7781 4.55:1, mixed #a8578a 4.78:1, axis #6e7781 4.55:1
 * Grid lines (#d0d7de, 1.45:1) are decoration: every value they mark is also written as text.
 */
export const PALETTE = {
  text: "#1f2328",
  muted: "#57606a",
  background: "#ffffff",
  axis: "#6e7781",
  grid: "#d0d7de",
  complaint: "#b8500b",
  praise: "#00805d",
  request: "#0072b2",
  neutral: "#6e7781",
  mixed: "#a8578a",
} as const;

export const STYLESHEET_PATH = "/assets/share.css";

export const STYLESHEET = `:root {
  color-scheme: light;
  --text: ${PALETTE.text};
  --muted: ${PALETTE.muted};
  --bg: ${PALETTE.background};
  --surface: #f6f8fa;
  --border: #d0d7de;
  --link: #0550ae;
  --mark: #fff3b0;
  --target: #fff8c5;
  --target-edge: #9a6700;
}
*, *::before, *::after { box-sizing: border-box; }
[hidden] { display: none !important; }
html { -webkit-text-size-adjust: 100%; text-size-adjust: 100%; }
body {
  margin: 0;
  color: var(--text);
  background: var(--bg);
  font: 1rem/1.6 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
  overflow-wrap: anywhere;
}
.site-header, main, .site-footer { max-width: 60rem; margin: 0 auto; padding: 1rem; }
.site-header { display: flex; flex-wrap: wrap; gap: 0 1rem; align-items: baseline; border-bottom: 1px solid var(--border); }
.brand { margin: 0; font-weight: 700; }
.page-kind { margin: 0; color: var(--muted); }
.site-footer { margin-top: 3rem; border-top: 1px solid var(--border); color: var(--muted); font-size: 0.9rem; }
.site-footer p { margin: 0.25rem 0; }
h1, h2, h3 { line-height: 1.25; margin: 2rem 0 0.75rem; }
h1 { font-size: clamp(1.4rem, 1rem + 2vw, 1.75rem); margin-top: 1rem; }
h2 { font-size: 1.35rem; padding-bottom: 0.25rem; border-bottom: 1px solid var(--border); }
h3 { font-size: 1.1rem; }
.h1-kind { font-weight: 400; color: var(--muted); font-size: 1.1rem; }
p, ul, ol, dl { margin: 0 0 1rem; }
.prose { white-space: pre-line; }
a { color: var(--link); text-underline-offset: 0.15em; }
:focus-visible { outline: 3px solid var(--link); outline-offset: 2px; }
/* The skip link focuses <main> so the next Tab starts there; main itself is not a control. */
main:focus { outline: none; }
.skip-link { position: absolute; left: 0.5rem; top: -3rem; padding: 0.5rem 1rem; background: var(--bg); color: var(--link); z-index: 1; }
.skip-link:focus { top: 0.5rem; }
.visually-hidden {
  position: absolute; width: 1px; height: 1px; padding: 0; margin: -1px;
  overflow: hidden; clip: rect(0 0 0 0); clip-path: inset(50%); white-space: nowrap; border: 0;
}
.muted, .meta { color: var(--muted); }
.meta { font-size: 0.9rem; }
.facts { display: grid; grid-template-columns: max-content 1fr; gap: 0.25rem 1rem; }
.facts dt { font-weight: 600; }
.facts dd { margin: 0; }
@media (max-width: 30rem) {
  .facts { grid-template-columns: 1fr; }
  .facts dd { margin-bottom: 0.5rem; }
}
.toc ul { display: flex; flex-wrap: wrap; gap: 0.25rem 1rem; padding: 0; list-style: none; }
.note { padding: 0.75rem 1rem; background: var(--surface); border-left: 4px solid var(--link); }
.tags { display: flex; flex-wrap: wrap; gap: 0.5rem; padding: 0; list-style: none; }
.tags li { padding: 0 0.5rem; border: 1px solid var(--border); border-radius: 0.25rem; background: var(--surface); }
.insight { margin-bottom: 2rem; }
.quote { margin: 0 0 1rem; padding: 0.5rem 1rem; border-left: 4px solid var(--border); background: var(--surface); scroll-margin-top: 1rem; }
.quote:target { background: var(--target); border-left-color: var(--target-edge); }
.quote blockquote { margin: 0 0 0.25rem; white-space: pre-line; }
.quote figcaption { color: var(--muted); font-size: 0.9rem; }
.quote-number { font-weight: 600; color: var(--text); }
mark { background: var(--mark); color: var(--text); padding: 0 0.1em; }
.unlinked { color: var(--muted); }
.table-wrap { overflow-x: auto; margin: 0 0 1.5rem; }
/* anywhere (inherited from body) would let a narrow screen squeeze a table to a letter per line; in tables
   words stay whole and the wrapper scrolls instead. */
table { border-collapse: collapse; width: 100%; overflow-wrap: break-word; }
caption { text-align: left; font-weight: 600; padding: 0.25rem 0; }
th, td { text-align: left; vertical-align: top; padding: 0.4rem 0.6rem; border-bottom: 1px solid var(--border); }
thead th { border-bottom-width: 2px; }
.num, td time, th time { white-space: nowrap; }
.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.current { background: var(--surface); font-weight: 600; }
.chart-figure { margin: 0 0 1.5rem; }
/* The viewBox is 400 units wide: about 1:1 on a phone, and capped so chart text stays near body size on a desktop. */
.chart { display: block; width: 100%; max-width: 30rem; height: auto; }
.legend { display: flex; flex-wrap: wrap; gap: 0.25rem 1rem; padding: 0; margin: 0.5rem 0; list-style: none; font-size: 0.9rem; }
.legend svg { width: 1rem; height: 1rem; vertical-align: -0.15rem; margin-right: 0.35rem; }
.sources { padding-left: 0; list-style: none; }
.pager ul { display: flex; flex-wrap: wrap; justify-content: space-between; gap: 0.5rem 1rem; padding: 0; list-style: none; }
details { margin: 0.5rem 0 1rem; }
summary { cursor: pointer; color: var(--link); }
.live { padding: 1rem; border: 1px solid var(--border); border-radius: 0.25rem; background: var(--surface); }
.live progress { width: 100%; height: 1rem; accent-color: var(--link); }
.live-quotes { padding-left: 0; list-style: none; }
button { font: inherit; padding: 0.35rem 0.9rem; border: 1px solid var(--link); border-radius: 0.25rem; background: var(--bg); color: var(--link); cursor: pointer; }
@media print {
  .live, nav, .skip-link, .toc, button { display: none !important; }
  body { font-size: 11pt; }
  .site-header, main, .site-footer { max-width: none; padding: 0; }
  .quote, figure, tr, .insight > h3 { break-inside: avoid; }
  h2, h3 { break-after: avoid; }
  .quote { background: none; }
  a.external::after { content: " (" attr(href) ")"; color: var(--muted); font-size: 0.85em; }
  .table-wrap { overflow: visible; }
}
`;

const hashOf = (text: string) => createHash("sha256").update(text).digest("hex").slice(0, 16);

/** Changes whenever the stylesheet does, so the router can cache the file for a year (`?v=` busts it). */
export const STYLESHEET_HASH = hashOf(STYLESHEET);
export const STYLESHEET_HREF = `${STYLESHEET_PATH}?v=${STYLESHEET_HASH}`;
export { hashOf as contentHash };
