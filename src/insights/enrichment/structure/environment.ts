/**
 * Version and environment dumps, line by line: the `key: value` pairs of an issue template's
 * environment section ("Nvim version (nvim -v): v0.9.1", "Installation: homebrew"), a tool's own
 * version output ("Python 3.11.7", `rustc -vV`'s "host: x86_64-unknown-linux-gnu", uname's line),
 * package pins and listings, and the bare value a template's environment field holds under its
 * heading ("xterm-kitty" under "$TERM environment variable"). A sentence that mentions a version
 * ("It broke after upgrading to 0.9") is none of these. Lines arrive normalised: no bullet, no
 * emphasis or code marks, trimmed.
 */

/** Package pins and listings: `pkg==1.2.3`, `pkg @ file:///…`, `numpy   1.26.4   py311`. */
const PIP = /^[A-Za-z0-9][\w.\-[\]]*\s*(?:===?|>=|<=|~=|!=)\s*[\w.*+!-]+(?:\s*[,;].*)?$|^[A-Za-z0-9][\w.-]* @ (?:file|https?|git\+)/;
const LISTED_VERSION = /^[A-Za-z0-9][\w.-]*(?: {2,}|\t+)v?\d[\w.+-]*(?:(?: {2,}|\t+)\S+){0,3}$/;
/** "Python 3.11.7", "macOS Sonoma 14.2", "torch 2.4.1", "NVIM v0.9.1", "kitty 0.26.5 created by Kovid Goyal". */
const NAME_VERSION = /^((?:[A-Za-z][\w.+-]*\s){1,3})v?\d+(?:\.\d+)+[\w.+-]*(?:\s*\([^)]*\))?$/;
/** A kernel's or a system's own description: uname's line (its start, or its build and machine), Windows' `ver`. */
const UNAME_START =
  /^(?:Linux|Darwin|FreeBSD|OpenBSD|NetBSD|MINGW\w*|MSYS\w*|CYGWIN\w*)\s+\S+\s+v?\d+\.\d+\S*\s|^(?:Microsoft )?Windows \[Version \d/;
const MACHINE = /\b(?:x86_64|aarch64|amd64|i[36]86|arm64)\b/;
const isUname = (s: string) => UNAME_START.test(s) || ((s.includes(" SMP ") || s.endsWith("GNU/Linux")) && MACHINE.test(s));
/** A build's feature flags ("+acl +iconv +tui", "VTE 0.68.0 +BIDI +GNUTLS +ICU"). */
const FEATURE_FLAGS = /(?:^|\s)[+-][A-Za-z][\w-]*\s+[+-][A-Za-z][\w-]*\s+[+-][A-Za-z][\w-]*(?:\s|$)/;
/** A commit hash alone. */
const HASH = /^[0-9a-f]{7,40}$/;
const LEADING_VERSION = /^[A-Z][\w.+-]*\s(?:[A-Za-z][\w.+-]*\s)?v?\d+\.\d+/;
const VERSIONS = /\bv?\d+\.\d+/g;
const KEY_VALUE = /^([^:\n]{1,60}?)\s*:\s+(\S.*)$/;
const ENV_KEY =
  /\b(?:os|versions?|platform|python|node(?:\.?js)?|npm|yarn|pnpm|browser|device|gpu|cpu|cuda|cudnn|driver|kernel|arch|architecture|memory|ram|distro|distribution|system|runtime|sdk|jdk|java|rustc?|go|compiler|gcc|clang|docker|hardware|model|firmware|build|commit|release|toolkit|torch|pytorch|tensorflow|transformers|numpy|smartphone|desktop|installation|install method|package manager|shell|terminal|term|editor|ide|host|binary|hash|luajit)\b/i;
const DOTTED_VERSION = /^v?\d+(?:\.\d+)+(?![\d.])/;
const ENV_VALUE_START =
  /^(?:v?\d+(?:\.\d+)*$|(?:linux|ubuntu|debian|fedora|centos|rhel|arch|alpine|nixos|windows|win\d*|macos|mac ?os|os ?x|darwin|ios|ipados|android|wsl\d?|x86_64|x64|x86|amd64|arm64|aarch64|armv\d|apple|intel|amd|nvidia|geforce|rtx|gtx|tesla|chrome|chromium|firefox|safari|edge|brave|opera|electron|cpython|pypy|docker|conda|pip)\b|(?:[A-Za-z]:)?[\\/~][\w.\\/~-]*$)/i;
const NULLISH =
  /^(?:not installed|not applicable|n\/a|na|none|null|unknown|yes|no|true|false|\?+|-+|<[^>]*>|\[[^\]]*\]|\.{3,}|tbd|no response)$/i;
const VERSION_OR_PLATFORM =
  /\bv?\d+\.\d+|\b(?:linux|ubuntu|debian|fedora|centos|windows|macos|mac ?os|ios|android|x86_64|amd64|arm64|aarch64|chrome|firefox|safari|edge|python|node(?:\.?js)?|cuda|nvidia)\b/i;
/** Words of a sentence, never of a field's value ("homebrew", "build from repo", "xterm-256color"). */
const SENTENCE_WORD =
  /\b(?:i|i'm|i've|me|my|you|we|it|it's|this|that|they|is|are|was|were|be|been|am|do|does|did|don't|doesn't|didn't|can|can't|cannot|could|will|won't|would|should|has|have|had|not|when|if|but|because|so|please|thanks?|there|there's)\b/i;

const words = (s: string) => (s.match(/\S+/g) ?? []).length;

/** Whether one normalised line is a version or environment dump, wherever it stands. */
export function isEnvLine(norm: string): boolean {
  if (PIP.test(norm) || LISTED_VERSION.test(norm) || isUname(norm)) return true;
  if (norm.includes(" +") && FEATURE_FLAGS.test(norm)) return true;
  const nv = NAME_VERSION.exec(norm);
  if (nv) {
    const names = nv[1]!.trim().split(/\s+/);
    // Product names are capitalised or carry digits/punctuation; "updated to 2.3" is prose.
    // A single name with a three-part version or a build in brackets ("rustc 0.9-pre (72e432d 2013-11-04)") is a tool's own.
    if (names.every((w) => /^[A-Z]|[\d._+-]|[a-z][A-Z]/.test(w)) || (names.length === 1 && /\d+\.\d+\.\d+|\)$/.test(norm))) return true;
  }
  // A version output run into one line: a product and its version first, then fields and another version,
  // no sentence's words ("NVIM v0.12.0 Build type: Release LuaJIT 2.1.17 Run …").
  if (norm.includes(":") && LEADING_VERSION.test(norm) && (norm.match(VERSIONS) ?? []).length >= 2 && !SENTENCE_WORD.test(norm))
    return true;
  const colon = norm.indexOf(":");
  const kv = colon > 0 && colon <= 62 ? KEY_VALUE.exec(norm) : null;
  if (!kv) return false;
  const key = kv[1]!;
  const value = kv[2]!.trim();
  const n = words(value);
  if (words(key) > 6) return false;
  // "Operating system/version: 4.15.0-38-lowlatency #41-Ubuntu SMP PREEMPT … x86_64 GNU/Linux".
  if (isUname(value) && ENV_KEY.test(key)) return true;
  if (n > 10) return false;
  // A form's question answered yes or no ("Vim behaves differently?: no") is a field as well.
  if (NULLISH.test(value)) return ENV_KEY.test(key) || /version|installed|\?$/i.test(key);
  if (DOTTED_VERSION.test(value)) return n <= 8;
  if (ENV_VALUE_START.test(value)) return n <= 6;
  // "Terminal name/version: kitty 0.26", "Installation: homebrew"; not "Note: this is broken".
  return ENV_KEY.test(key) && n <= 6 && (VERSION_OR_PLATFORM.test(value) || !SENTENCE_WORD.test(value));
}

/** A key with no value ("Terminal name/version:", "- `$TERM`:"), naming an environment field. */
export function isEnvKey(norm: string): boolean {
  return norm.endsWith(":") && words(norm) <= 4 && ENV_KEY.test(norm) && !SENTENCE_WORD.test(norm);
}

/** A short field of a list ("TypeScript: Workspace SDK via .yarn/sdks"): a dump when it stands among dump lines. */
export function isFieldLine(norm: string): boolean {
  const kv = KEY_VALUE.exec(norm);
  return kv !== null && words(kv[1]!) <= 3 && words(kv[2]!) <= 6 && !SENTENCE_WORD.test(kv[2]!);
}

/**
 * A line under an environment heading (or an environment key) that is a field's value: short, a
 * version or platform, a commit hash, or a name that no sentence word joins ("homebrew", "build from
 * repo"), and not a sentence's end.
 */
export function isEnvValue(norm: string): boolean {
  const n = words(norm);
  if (n > 8) return false;
  if (HASH.test(norm) || NULLISH.test(norm)) return true;
  if (VERSION_OR_PLATFORM.test(norm) || KEY_VALUE.test(norm)) return true;
  return n <= 5 && !/[.!?]$/.test(norm) && !SENTENCE_WORD.test(norm);
}
