import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";

/**
 * A real browser for page tests: the operating system's headless Chromium (Debian's `chromium`,
 * which `.ci/run` installs when it is missing; `CHROMIUM_PATH` names another), driven by
 * playwright-core. Each opened page records its console errors and failed requests, and
 * screenshots go to `test-results/pages/`, which the test run keeps.
 */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
export const SCREENSHOT_DIR = path.resolve("test-results/pages");

// Without the background-networking flags Chromium keeps calling home, which a closed network refuses.
const FLAGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--disable-dev-shm-usage",
];

export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(`No Chromium at ${CHROMIUM_PATH}: install Debian's chromium package (apt-get install chromium) or set CHROMIUM_PATH.`);
  }
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: FLAGS });
}

export interface WatchedPage {
  page: Page;
  /** Console errors and page errors, in order. */
  errors: string[];
  /** Requests that failed or answered 400 and above (a page's own 404 document excepted). */
  failed: string[];
  close: () => Promise<void>;
}

export async function openPage(
  browser: Browser,
  options: { viewport?: { width: number; height: number }; javaScript?: boolean } = {},
): Promise<WatchedPage> {
  const context = await browser.newContext({
    viewport: options.viewport ?? { width: 1280, height: 900 },
    javaScriptEnabled: options.javaScript ?? true,
  });
  const page = await context.newPage();
  const errors: string[] = [];
  const failed: string[] = [];
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(message.text());
  });
  page.on("pageerror", (err) => errors.push(err.message));
  page.on("requestfailed", (request) => {
    // A reload cancels the page's open event stream; that is not a failure of the page.
    if (request.failure()?.errorText === "net::ERR_ABORTED" && request.url().endsWith("/events")) return;
    failed.push(`${request.url()} ${request.failure()?.errorText ?? ""}`);
  });
  page.on("response", (response) => {
    if (response.status() >= 400 && response.request().resourceType() !== "document") failed.push(`${response.url()} ${response.status()}`);
  });
  return { page, errors, failed, close: () => context.close() };
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/**
 * axe-core's WCAG 2.1 A and AA rules on the page as it is. axe is evaluated through the DevTools
 * protocol, which the page's CSP does not govern, so the CSP stays in force for the page itself.
 */
export async function axeAudit(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(axeSource);
  return page.evaluate(async () => {
    const { axe, document } = globalThis as unknown as {
      axe: { run: (ctx: unknown, opts: unknown) => Promise<{ violations: AxeViolation[] }> };
      document: unknown;
    };
    const result = await axe.run(document, {
      runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"] },
    });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => ({ target: n.target })) }));
  });
}

/** The serious and critical violations, described for an assertion message. */
export const seriousOf = (violations: AxeViolation[]) =>
  violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);

export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const file = path.join(SCREENSHOT_DIR, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}
