/**
 * Section headings of issue and forum templates, and the role each plays. A role comes
 * from keyword families, not exact headings, so "### 🐛 Describe the bug", "**Bug
 * description**" and "What happened?" all read as the bug's description, and a template
 * never seen before still maps.
 */
export type SectionRole =
  | "bug_description"
  | "reproduction"
  | "expected"
  | "actual"
  | "environment"
  | "feature_request"
  | "motivation"
  | "alternatives"
  | "question"
  | "other";

/**
 * Checked in order: the first family that matches wins, so the narrower families come first
 * ("is your feature request related to a problem?" is motivation, not a feature request;
 * "what did you expect to happen?" is expected, not what happened).
 */
const FAMILIES: [SectionRole, RegExp][] = [
  ["expected", /\bexpect|\bdesired (?:behaviou?r|result|outcome)|\bshould (?:happen|do|be)\b|\bintended behaviou?r/],
  [
    "actual",
    /\b(?:actual|current|observed) (?:behaviou?r|result|outcome)|\bactually happen|\bwhat (?:happens|happened) instead|^(?:actual|result|results|outcome)$/,
  ],
  ["alternatives", /\balternative|\bworkaround|\bother solutions?\b|\byou'?ve considered/],
  [
    "motivation",
    /\bmotivation|\brelated to a problem|\buse ?cases?\b|\bwhy (?:is|do|would|should)|\bproblem statement|\bbackground\b|\brationale\b/,
  ],
  [
    "reproduction",
    /\breproduc|\brepro\b|\bsteps\b|\bhow to trigger|\bminimal (?:example|code|sample)|\bmwe\b|\bmcve\b|\b(?:code|sample|example) (?:example|code|snippet)/,
  ],
  [
    "environment",
    /\benvironment|\benv\b|\bsystem info|\bsystem\b|\bplatform|\bversions?\b|\bsetup\b|\bconfiguration\b|\bdevice\b|\bdesktop\b|\bsmartphone|\bbrowser|\b(?:os|software|hardware|dependencies)\b|\binstalled packages|\binstallation\b|\binstall method\b|\bcommit hash\b/,
  ],
  [
    "feature_request",
    /\bfeature|\bsolution\b|\bproposal|\bpropos|\bsuggest|\benhancement|\brequest\b|\bwould you like|\byou'?d like|\bwish\b|\bimprovement|\bidea\b|\bpitch\b|\bapi design/,
  ],
  ["question", /\bquestions?\b|\bhow (?:do|can|to|does|should)\b|\bhelp\b|\bsupport\b|\bask\b/],
  [
    "bug_description",
    /\bbugs?\b|\bdescri(?:be|ption)\b|\bwhat'?s wrong|\bissues?\b|\bproblems?\b|\bwhat happened|\bcrash|\berrors?\b|\bregression|\bdefects?\b/,
  ],
];

const roleCache = new Map<string, SectionRole>();

/** The role of a section from its (normalised) heading; `null` or an unknown heading gives "other". */
export function sectionRole(section: string | null): SectionRole {
  if (!section) return "other";
  const cached = roleCache.get(section);
  if (cached) return cached;
  let role: SectionRole = "other";
  for (const [r, re] of FAMILIES) {
    if (re.test(section)) {
      role = r;
      break;
    }
  }
  if (roleCache.size > 5000) roleCache.clear();
  roleCache.set(section, role);
  return role;
}

/**
 * A heading's text as a section name: markup, emoji and surrounding punctuation dropped,
 * whitespace collapsed, lower-case ("### 🐛 **Describe the bug:**" → "describe the bug").
 */
export function normaliseHeading(raw: string): string | null {
  const text = raw
    .replace(/<[^>\n]*>/g, " ")
    .replace(/[*_`~#]+/g, " ")
    .replace(/\s+/g, " ")
    .toLowerCase()
    .replace(/^[^\p{L}\p{N}]+/u, "")
    .replace(/[\s:.\-–—]+$/u, "")
    .slice(0, 200)
    .trim();
  return /[\p{L}\p{N}]/u.test(text) ? text : null;
}

/**
 * An unmarked line that opens a template section ("Steps to reproduce:", "Expected
 * behavior"): the usual template headings, matched at the start of the (lower-cased) line.
 */
export const HEADING_START =
  /^(?:describe the (?:bug|issue|problem|solution|feature|alternatives?)|describe alternatives|(?:bug|issue|problem|feature) (?:description|request|report)|(?:steps|how) to reproduce|to reproduce|reproduction(?: steps)?|expected (?:behaviou?r|results?|outcome)|(?:actual|current|observed) (?:behaviou?r|results?|outcome)|environment|system info(?:rmation)?|(?:additional|other) (?:context|information|details|notes)|screenshots?|motivation|alternatives?(?: considered)?|proposed (?:solution|change|feature)|(?:feature|solution) proposal|use ?cases?|is your feature request related|what (?:happened|did you expect)|questions?|description|workaround)\b/;
