/**
 * The judge's expressions (markup-oracle.ts), written for it alone from the rules of what counts as
 * markup; nothing here comes from the engine. Each is tested on one line's content, with blockquote
 * markers and a list bullet already removed; `raw` tests see the line as written.
 */

/** Log and trace lines: tool output, whatever printed it. */
export const LOG_LINE: RegExp[] = [
  // Timestamps and levels.
  /^[[(]?\d{4}[-/.]\d\d[-/.]\d\d[T _]\d\d?:\d\d/,
  /^[[(]?\d\d:\d\d:\d\d(?:[.,]\d+)?\b/,
  /^(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [ \d]\d \d\d:\d\d/,
  /^\[(?:[A-Z]+\]\[)?(?:TRACE|DEBUG|INFO|WARN|WARNING|ERROR|FATAL|CRITICAL|START)\]/i,
  /^(?:TRACE|DEBUG|INFO|WARN|WARNING|ERROR|FATAL|CRITICAL)(?:\s*:|\s+\[|\s+\S+:\d)/,
  /\blevel=(?:trace|debug|info|warn|error|fatal)\b/,
  // Compiler and linter diagnostics (rustc, gcc/clang, tsc, cargo, make, cmake).
  /^(?:error|warning|note|help)(?:\[[A-Z]?\d+\])?: /,
  /^= (?:note|help): /,
  /^-->\s*\S+:\d+/,
  /^\d*\s*\|(?:\s|$)/,
  /^\^[\^~-]*(?:\s|$)/,
  /^\S+\.\w{1,6}:\d+(?::\d+)?:\s*(?:fatal error|error|warning|note|in function)\b/i,
  /^(?:Compiling|Checking|Downloaded|Installing|Fresh) \S+ v\d/,
  /^(?:Finished|Running|Updating|Blocking) (?:`[^`]*`$|dev \[|release \[|`?crates\.io|test \[|target\/)/,
  /^error: (?:could not compile|aborting due to|linking with)/,
  /^make(?:\[\d+\])?: /,
  /^CMake (?:Error|Warning)|^-- (?:The |Found |Looking for |Performing |Configuring |Generating |Build files |Check for |Detecting )/,
  /^\[\s*\d{1,3}%\]/,
  /^error TS\d+:/,
  // Stack traces: Python, JavaScript/Java, Rust, Go, gdb, Lua, Vim.
  /^Traceback \(most recent call last\)/,
  /^File "[^"]*", line \d+/,
  /^File [~/\w.-]+:\d+, in /,
  /^(?:-+>\s*)?\d{1,6}\s{2,}\S/,
  /^at (?:async )?[\w$.<>[\]/:\\ -]+ ?\(?[^)\s]*:\d+(?::\d+)?\)?$/,
  /^at [\w$.<>]+\(.*\)$/,
  /^(?:Caused by|Exception in thread)\b/,
  /^(?:[\w$]+\.)*[A-Z]\w*(?:Error|Exception)(?::\s.*)?$/,
  /^thread '[^']*' panicked at/,
  /^(?:stack backtrace|stack traceback|Backtrace|Call stack):?$/i,
  /^\d+:\s+(?:0x[0-9a-f]+ - )?\S+::\S/,
  /^at \/?\S+\.rs:\d+/,
  /^goroutine \d+ \[/,
  /^#\d+\s+(?:0x[0-9a-f]+ in |\S+ \(|\S+ at )/,
  /^\[C\]: in /,
  /^\S+\.lua:\d+: /,
  /^\.\.\.\S*:\d+: /,
  /^E\d{2,4}: /,
  /^(?:Error detected while processing|line\s+\d+:$)/,
  /^function [\w#<>.[\]]+\[\d+\]\.\./,
  /^Segmentation fault|\(core dumped\)|^Aborted\b|^Killed$|^Illegal instruction/,
  /^==\d+==/,
  /\([\w.$@]*\+0x[0-9a-fA-F]+\)\s*\[0x[0-9a-fA-F]+\]/,
  /^task '[^']*' failed at '/,
  /\bterminated by signal SIG[A-Z]+/,
  /^(?:\S+:)?\d+:\d+:?\s+\d+:\d+\s+(?:error|warning|note)\b/,
  /^(?:\S+\s+){0,2}0x[0-9a-fA-F]{6,}\b/,
  // Shell prompts and REPLs, and output drawn with box characters (pip, rich).
  /^(?:\$|❯|➜|%|>>>|In \[\d+\]:|PS [A-Z]:\\[^>]*>)\s+\S/,
  /^[A-Za-z]:\\[^>\s]*>\s*\S/,
  /^[\w.-]+@[\w.-]+:[^\s]*[$#]\s/,
  /^[│├└╰╭┌┐┘┬┴┼─═║╔╗╚╝×]/,
  /^\[\d+ lines of output\]$/,
  // Health checks and test runners.
  /^(?:OK|WARNING|ERROR|INFO|ADVICE): /,
  /^[-*] (?:OK|WARNING|ERROR|INFO|ADVICE)\b/,
  /^(?:test \S+ \.\.\. (?:ok|FAILED|ignored)|test result: |running \d+ tests?$|failures:$)/,
  // A path alone on a line.
  /^(?:[A-Za-z]:)?[\\/~][\w.@+~-]*(?:[\\/][\w.@+~-]*)+(?::\d+)*$/,
];

/** Code by its shape, standing alone on a line. */
export const CODE_LINE: RegExp[] = [
  /[;{]\s*$/,
  /^[)}\]]+[;,)]*$/,
  /^(?:import|from)\s+[\w.@/'"-]+(?:\s+import\b.*)?;?$/,
  /^(?:use|mod|extern crate)\s+[\w:{}, *]+;$/,
  /^#\s*(?:include|define|ifn?def|endif|if|pragma)\b/,
  /^(?:def|fn|pub fn|async fn|func|function|class|struct|enum|impl|trait|interface|local function)\s+[\w$]+\s*[(<:{]/,
  /^(?:local|let|const|var|auto|int|char|void|static)\s+[\w$]+(?:\s*:\s*\S+)?\s*=/,
  /^(?:end|else|fi|done|esac|then|do)$/,
  /^(?:return|raise|throw)\b.*[;)]$/,
  /^(?:if|elseif|while|for)\s.+\s(?:then|do)$/,
  // Assignments and keyword arguments: "x = 1", "name=name,", "opts.root_dir = util.root_pattern(…)".
  /^[A-Za-z_$][\w$.[\]'":]*\s*(?:=|\+=|-=|:=|==)\s*\S.*$/,
  // A call standing alone: "vim.lsp.buf.format()", "require('lspconfig').pyright.setup{}".
  /^[\w$.:#]+(?:\([^)]*\)|\{[^}]*\})(?:[\w$.:]*(?:\([^)]*\)|\{[^}]*\}))*[;,]?$/,
  // A quoted member of a list or table: '"ray-x/lsp_signature.nvim",', "'--stdio',".
  /^["'][^"'\s]*["']\s*[,;]?$/,
  /^["'][^"']*["']\s*[,;]$/,
  /^["'][\w.$/@-]+["']\s*[:=]\s*\S/,
  // Vim script and Ex commands.
  /^:?set(?:local|l)?\s+(?:\S*=\S*|no\w+$)/,
  /^:?let\s+[gsbwtlv]:\w+/,
  /^:?[nvxsoict]?(?:nore)?map!?\s+.*<\w[\w-]*>/,
  /^:?(?:autocmd|au)!?\s+[A-Z]\w+/,
  /^:?(?:hi|highlight)!?\s+\w+\s+\w+=/,
  /^:?lua\s+(?:require|vim\.|print)/,
  /^:?call\s+[\w#.:]+\(/,
  /^:[A-Za-z]{2,}\w*(?:\s|$)/,
];

/** A heading without markdown's marks. */
export const HEADING_LABEL: RegExp[] = [
  // A bold line standing alone, not a sentence.
  /^(\*\*|__)[^*_\n]{0,99}[^*_\n.!]\1\s*:?$/,
  // A template section name alone on its line.
  /^(?:describe the (?:bug|issue|problem|solution|feature)|describe alternatives|(?:steps|how) to reproduce|to reproduce|reproduction(?: steps)?|expected (?:behaviou?r|results?|outcome)|(?:actual|current|observed) (?:behaviou?r|results?|outcome)|environment|system info(?:rmation)?|(?:additional|other) (?:context|information|details|notes)|screenshots?|motivation|alternatives?(?: considered)?|proposed (?:solution|change|feature)|use ?cases?|what happened\??|what did you expect(?: to happen)?\??|description|workaround|summary|problem|solution|logs?|output|error(?: message)?|(?:minimal )?(?:code )?(?:example|repro|config(?:uration)?)|version(?: info(?:rmation)?)?)\s*:?$/i,
  // A short label ending in a colon, nothing after it ("Output:", "Relevant line:", "Error message:").
  /^(?![^:]*\b(?:[Ii]|[Ww]e|[Yy]ou|[Ii]t|[Tt]his|[Tt]hat)\b)[A-Z$`][\w$`()/.-]*(?:\s+[\w$`()/.-]+){0,2}:$/,
];

/** Environment field names: a key or heading naming one holds a dump. */
export const DUMP_KEY =
  /\b(?:versions?|vers?|os|operating system|platform|system|environment|env|terminal|\$?term|shell|installation|installed|install method|build(?: type)?|compil\w*|browser|distro|distribution|kernel|arch(?:itecture)?|cpu|gpu|ram|memory|device|hardware|python|node(?:\.?js)?|npm|rustc?|cargo|lua(?:jit)?|n?vim|neovim|qt|toxcore|qtox|gcc|clang|compiler|toolchain|host|target|commit|sha|hash|branch|revision|features|package manager|plugin manager|locale|lang|encoding|client|server)\b/i;

/** Headings of template fields that hold an environment value. */
export const ENV_HEADING =
  /\b(?:versions?|os|operating system|platform|system|environment|terminal|\$?term|shell|installation|install method|build|browser|distro|distribution|kernel|arch(?:itecture)?|device|hardware|commit|branch|package manager|plugin manager)\b/i;

/** "Python 3.11.7", "NVIM v0.9.1", "rustc 1.70.0 (90c541806 2023-05-31)", "kitty 0.26", a bare "v0.9.1". */
export const NAME_VERSION = /^((?:[A-Za-z$][\w.+/-]*\s+){0,3})v?\d+(?:\.\d+)+[\w.+~-]*(?:\s+\([^)]*\))?(?:\s+\S+)?$/;

/** Other dumps: package pins and listings, uname output, `nvim --version` lines, feature lists. */
export const OTHER_DUMP: RegExp[] = [
  /^[A-Za-z0-9][\w.-]*\s*(?:==|>=|<=|~=)\s*v?\d[\w.*+-]*$/,
  /^[A-Za-z0-9][\w.-]*(?: {2,}|\t+)v?\d+(?:\.\d+)+\S*(?:(?: {2,}|\t+)\S+)*$/,
  /^(?:Linux|Darwin|FreeBSD|MINGW\w*|MSYS\w*)\s+\S+\s+\d+\.\d+/,
  /\b(?:x86_64|aarch64|amd64|i[36]86|arm64)\s+(?:GNU\/Linux|\S+\s+GNU\/Linux)$/,
  /^(?:[+-][\w-]+\s+){2,}[+-][\w-]+$/,
  /^Run :checkhealth for more info$/,
  /\s\+[A-Z][A-Z\d_]+\s+\+[A-Z][A-Z\d_]+\b/,
  /^(?:Microsoft Windows|Windows) \[?Version \d/,
];

/** A line that is a template's hint as a whole. */
export const HINT_LINE =
  /^(?:\[[ xX]\]\s|_?no response_?\.?$|n\/a\.?$|_?none_?\.?$|(?:please )?(?:go to|click on|scroll down to) ['"‘“][^'"’”]*\.\.\.|see error\.?$|steps to reproduce the behaviou?r:?$|(?:i tried this code|i expected to see this happen|instead,? this happened):?$)/i;

/** A sentence of a template's hint: the usual template sentences and instructions to the reporter. */
export const HINT_PHRASE =
  /\ba clear and concise description\b|\bif applicable, add\b|\badd any other (?:context|information|details)\b|(?:^\W*|\bplease,?\s+)(?:provide|include|paste|attach|describe|explain|list|share|tell us|let us know|fill (?:in|out))\b[^.!?\n]{0,80}\b(?:here|below|above|the following|this (?:issue|bug|template|form|section|field)|minimal (?:reproduction|repro|example|config)|steps to reproduce|your (?:issue|problem|environment|setup|config(?:uration)?|system|use case|request|version))\b|^\W*before (?:reporting|submitting|opening|filing)\b.*\b(?:search|check|make sure|read|please)\b|\bsearch (?:the )?existing issues\b|\bi have (?:searched|read|checked)\b|\bthanks? (?:you )?for (?:taking the time|reporting|filing|contributing)\b|\b(?:delete|remove|replace) (?:this|these) (?:line|section|text|template|comment)s?\b|\bwhat did you expect to happen\b|\bsteps to reproduce the behaviou?r\b/i;
