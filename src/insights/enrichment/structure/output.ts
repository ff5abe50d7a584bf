/**
 * Pasted output and code, one line at a time: a stack trace's frames and exception lines, log and
 * tool output (timestamps, levels, compiler diagnostics, prompts), and code without a fence (by its
 * statements, or by how dense it is in brackets and operators). Each test is an anchored expression
 * on one line, so an ordinary sentence costs a few failed first-character matches (lines.ts).
 */
const anchored = (parts: string[]) => new RegExp(`^(?:${parts.join("|")})`);

export const FENCE = /^(?:```|~~~)/;

/** Frames and headers of stack traces: Python, JS/Java/C#, Rust, Go, C/gdb, PHP, Ruby, .NET, Apple crash logs. */
export const FRAME = anchored([
  String.raw`Traceback \(most recent call last\)`,
  String.raw`File "[^"\n]*", line \d+`,
  String.raw`at (?:async )?\S.*(?::\d+(?::\d+)?\)?|\((?:native|<anonymous>|Native Method|Unknown Source)\)|:line \d+)$`,
  String.raw`at [\w$<>\x60]+(?:\.[\w$<>\x60]+)+\(.*\)$`,
  String.raw`\.\.\. \d+ (?:more|common frames omitted)$`,
  String.raw`Caused by: \S`,
  "thread '.*' panicked at",
  "stack backtrace:$",
  "(?:Stack ?trace|Backtrace|Call stack):?$",
  String.raw`goroutine \d+ \[[^\]]*\]:$`,
  String.raw`panic: \S`,
  String.raw`\S+\.go:\d+(?: \+0x[0-9a-f]+)?$`,
  String.raw`#\d+\s+(?:0x[0-9a-fA-F]+\s+in\s+\S|\S+\(\d+\): |\{main\}|\S+\.\w+:\d+)`,
  String.raw`\d+\s+\S+\s+0x[0-9a-fA-F]{6,}\s`,
  String.raw`(?:from )?\S+:\d+:in [\x60'‘]`,
  "--- End of (?:inner exception )?stack trace",
  "During handling of the above exception",
  "The above exception was the direct cause",
  String.raw`\d+: +(?:0x[0-9a-f]+ - )?\S*::\S`,
  'Exception in thread "',
  String.raw`note: run with \x60?RUST_BACKTRACE=`,
  "note: (?:the compiler (?:unexpectedly panicked|hit an unexpected failure path)|we would appreciate a bug report|in expansion of )",
  // glibc's backtrace_symbols ("/usr/lib/libc.so.6(+0x2a1c)[0x7f…]"), a Rust frame's address alone, an old Rust task failure.
  String.raw`\S+\((?:[\w.$@]*\+0x[0-9a-fA-F]+)?\)\s*\[0x[0-9a-fA-F]+\]`,
  String.raw`\d+:\s+0x[0-9a-fA-F]+(?:\s+-|$)`,
  "task '[^']*' failed at '",
  // IPython's and pytest's frames: a file and line, then the numbered source lines ("-> 2134         name=name,").
  String.raw`File [~\w./\\:-]+:\d+,? in `,
  String.raw`Cell In ?\[\d+\], line \d+`,
  String.raw`(?:-+>\s*)?\d{1,6} {2,}\S`,
  // Lua tracebacks and require's search list.
  "stack traceback:$",
  String.raw`\S+\.lua:\d+: in `,
  String.raw`\[C\]: in `,
  "no file '[^']*'$",
  String.raw`no field package\.preload\[`,
]);

/** An exception or error message: "ValueError: bad", "Uncaught (in promise) TypeError: …", "java.lang.NullPointerException". */
export const BARE_EXCEPTION = /^(?:Error|Exception|Panic|Fault|Failure)\b/;
export const EXCEPTION =
  /^(?:(?:Uncaught|Unhandled|Fatal)(?: \(in promise\))? )?(?:[\w$]+[.:]){0,8}[\w$]*(?:Error|Exception|Panic|Fault|Failure)(?:\s*:\s.*|\s*\[.*|\s*\{.*|:?)$/;

/** Python's last traceback line ("KeyError: 'x'", "torch.cuda.OutOfMemoryError: …", "KeyboardInterrupt"). */
export const TRACE_TAIL = /^[A-Za-z_][\w.]*(?::\s.*)?$/;
/** Go's function lines and "created by" lines inside a goroutine dump; caret markers under a source line. */
export const TRACE_CONTINUATION = /^(?:[\w.$/*()[\]-]+\(.*\)$|created by \S|[\^~]+\s*$|\^)/;

/** Log and tool output: timestamps, levels, package-manager and compiler messages, shell and REPL prompts, request lines, progress bars, bare paths. */
export const LOG = anchored([
  String.raw`[[(]?\d{4}[-/.]\d{2}[-/.]\d{2}[T _]\d{1,2}:\d{2}`,
  String.raw`[[(]?\d{1,2}:\d{2}:\d{2}[.,]\d{1,9}`,
  String.raw`(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [ \d]\d \d{2}:\d{2}:\d{2}\b`,
  String.raw`[IWEF]\d{4} \d{2}:\d{2}:\d{2}`,
  String.raw`[[(<](?:TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|ERR|FATAL|CRITICAL|CRIT|SEVERE|PANIC)[\])>:|]`,
  String.raw`\[(?:trace|debug|info|notice|warn|warning|error|err|fatal|critical)\]`,
  String.raw`(?:npm|yarn|pnpm|pip|cargo|gradle|mvn|make(?:\[\d+\])?)(?: ERR!| WARN| error\b| warn\b| \*\*\*)`,
  String.raw`(?:error|warning)(?:\[[A-Z]*\d+\])?: `,
  String.raw`error TS\d+:`,
  String.raw`\S+?\.[A-Za-z]\w{0,9}(?:[:(]\d+){1,2}\)?:?(?:\s*\d+:\d+)?\s*(?:-\s*)?(?:error|warning|fatal error|note)\b`,
  // Neovim's LSP log ("[START][2023-07-26 10:00:40] …"), Vim's errors ("E492: Not an editor command"), cargo's progress.
  String.raw`\[[A-Z]{3,8}\]\[\d{4}-\d\d-\d\d`,
  String.raw`E\d{2,4}: \S`,
  // pip's and other tools' output drawn with box characters ("╰─> [24 lines of output]", "× Failed to build").
  "[│├└╰╭┌┐┘─═║╔╗╚╝×]",
  String.raw`\[\d+ lines of output\]`,
  "Error detected while processing ",
  String.raw`function [\w#<>.:]+\[\d+\]\.\.`,
  String.raw`\S+\.lua:\d+: \S`,
  "Segmentation fault(?: \\(core dumped\\))?\\.?$",
  // Health checks ("INFO: gopls: configuration checked.").
  String.raw`(?:INFO|WARN(?:ING)?|ERROR|ADVICE):? [\w.-]+: `,
  // A compiler quoting a source line after its path ("src/lib.rs:1 #![cfg_attr(…)]").
  String.raw`(?:[\w.-]*\/)+[\w.-]+\.\w{1,6}:\d+\s+\S`,
  String.raw`(?:Compiling|Checking|Downloaded|Downloading|Installing|Fresh|Documenting) [\w-]+ v\d`,
  String.raw`-->\s*\S+:\d+:\d+`,
  String.raw`(?:[$❯➜λ]|>>>|PS [^>\n]{0,80}>|[\w.-]+@[\w.-]+:[^$#\n]{0,120}[$#]|In \[\d+\]:|Out\[\d+\]:)\s+\S`,
  String.raw`[A-Za-z]:\\[^>\n]{0,120}>\s*\S`,
  String.raw`(?:GET|POST|PUT|DELETE|PATCH|HEAD|OPTIONS) /\S*`,
  String.raw`\d{1,3}%\|`,
  String.raw`(?:exit (?:status|code)|Process finished with exit code|error Command failed with exit code) -?\d+`,
  String.raw`(?:[A-Za-z]:)?[\\/](?:[\w.@+-]+[\\/])+[\w.@+-]*(?::\d+)*$`,
  // Valgrind and sanitizer reports ("==30999== Invalid read of size 8"), and hex dumps of memory.
  String.raw`==\d+==`,
  String.raw`(?:SUMMARY: )?\w*Sanitizer\b|Shadow byte`,
  // gdb sessions.
  String.raw`\[(?:New )?Thread |Thread \d+ \(|Core was generated by|No symbol table info|\[Inferior \d+|Program (?:received|terminated with) signal`,
  String.raw`(?:0x)?[0-9a-fA-F]{6,}:(?:\s+[0-9a-fA-F]{2}){4}`,
]);
/** A bare level opening a line ("ERROR: …"): output only if the line also looks technical, since "WARNING: do not buy" is a review. */
export const LEVEL = /^(?:TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|ERR|FATAL|CRITICAL|CRIT|SEVERE|PANIC)(?:[:|\]]|\s|$)/;
/** Paths, assignments, brackets, quotes (not apostrophes), dotted names, calls, times, addresses. */
export const TECHNICAL = /[\\/=<>{}[\]`]|(?<![A-Za-z])['"]|['"](?![A-Za-z])|\w\.\w|\w\(|::|0x|\d:\d/;
const LOG_ANYWHERE = /\blevel=(?:trace|debug|info|warn|warning|error|fatal)\b|\d+\/\d+ \[\d{2}:\d{2}<|\bat 0x[0-9a-fA-F]{8,}\b/;
/** Output marked anywhere in its line: a log field, a progress bar, an address, a process that died of a signal. */
export const isLogAnywhere = (line: string) =>
  LOG_ANYWHERE.test(line) || line.includes("(core dumped)") || line.includes("terminated by signal SIG");

/** Code pasted without a fence: imports, declarations, assignments, calls, closing brackets, JSON members. */
export const CODE = anchored([
  String.raw`(?:import|from)\s+[\w.@/'"-]+(?:\s+import\s+[\w*{},\s]+|\s+from\s+['"][^'"]+['"])?;?$`,
  String.raw`import\s+[\w*{},\s]+\s+from\s+['"]`,
  String.raw`(?:const|let|var)\s+[\w\x24{}[\],\s]+=`,
  String.raw`(?:def|class|fn|func|function|async function|pub fn|public|private|protected)\s+[\w$]+\s*[(<:{]`,
  String.raw`#include\s*[<"]`,
  String.raw`[})\]]+[;,)]*$`,
  String.raw`[A-Za-z_$][\w$.[\]'"]*\s*(?:=|\+=|-=|:=)\s*(?:[\w$.]+\(|["'[{]|-?\d|new\s|true\b|false\b|None\b|null\b)`,
  String.raw`[\w$]+(?:\.[\w$]+)+\(.*\);?$`,
  String.raw`(?:print|console\.\w+)\(`,
  String.raw`(?:raise [A-Z]\w*(?:\(|$)|throw new \w)`,
  String.raw`//\s|#!/`,
  String.raw`<\?xml|<!DOCTYPE`,
  String.raw`"[\w.-]+"\s*:\s*(?:"|\d|\{|\[|true|false|null)`,
  // Lua, shell and Ruby block words alone on a line, and their openers.
  "(?:end|else|fi|done|esac|return)[;,)]*$",
  String.raw`local\s+(?:function\s+)?[\w.]+\s*(?:=|\()`,
  String.raw`(?:if|elseif|while|for)\s.+\s(?:then|do)$`,
  // A value passed on ("on_attach = on_attach,", "process_id=process_id,"), a returned call.
  String.raw`[A-Za-z_$][\w$.]*\s*=\s*[A-Za-z_$][\w$.]*,?\s*$`,
  String.raw`return\s+[\w$.:]+\(.*\)[;,]?\s*$`,
  // Vim's Ex commands (":edit foo", ":hi Normal guifg=…") and options ("set encoding=utf-8").
  String.raw`:[A-Za-z]{2,}\w*(?:!|\s|$)`,
  String.raw`(?:set|setlocal)\s+(?:[\w-]+[+^-]?=\S*|no\w+)\s*$`,
]);
export const DIAGNOSTIC = /^(?:= )?(?:note|help|hint): \S/;
export const CODE_END = /[;{]\s*$/;

/**
 * A line dense with brackets and operators, outside inline code and emphasis marks: at least six,
 * and more than one for every five letters ("{ i32, { i32, [8 x i8] } }", "2>::Allocate<v8::internal::Isolate>(…").
 */
export function isDense(line: string): boolean {
  // Most lines hold fewer than six such characters in all: one scan of the regular expression says so.
  if (!SIX_SYMBOLS.test(line)) return false;
  let symbols = 0;
  let letters = 0;
  let tick = false;
  for (let i = 0; i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (c === 96 /* ` */) tick = !tick;
    else if (tick) continue;
    else if ((c >= 97 && c <= 122) || (c >= 65 && c <= 90)) letters++;
    else if (c === 42 /* * */ && line.charCodeAt(i + 1) === 42) i++;
    else if (DENSE_SYMBOL[c]) symbols++;
  }
  return symbols >= 6 && symbols * 5 > letters;
}
const SIX_SYMBOLS = /^(?:[^{}[\]()<>;=|&*^$\\]*[{}[\]()<>;=|&*^$\\]){6}/;
const DENSE_SYMBOL = new Uint8Array(128);
for (const ch of "{}[]()<>;=|&*^$\\") DENSE_SYMBOL[ch.charCodeAt(0)] = 1;
