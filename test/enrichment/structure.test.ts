import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type BlockKind,
  documentStructure,
  type Format,
  guessFormat,
  proseRanges,
  sectionRole,
} from "../../src/insights/enrichment/structure.js";

/** The prose of a text as [verbatim text, section role] pairs, checking each range's offsets on the way. */
function prose(text: string, format?: Format): [string, string][] {
  return proseRanges(text, format).map((r) => {
    const slice = text.slice(r.start, r.end);
    expect(slice.trim()).toBe(slice);
    expect(sectionRole(r.section)).toBe(r.sectionRole);
    return [slice, r.sectionRole];
  });
}

/** Each region's text, by kind. */
function byKind(text: string, format?: Format): Partial<Record<BlockKind, string[]>> {
  const out: Partial<Record<BlockKind, string[]>> = {};
  for (const r of documentStructure(text, format)) {
    const list = out[r.kind] ?? [];
    list.push(text.slice(r.start, r.end));
    out[r.kind] = list;
  }
  return out;
}

const BUG_REPORT = `### Describe the bug

<!-- A clear and concise description of what the bug is. -->
When I load a 4-bit model with \`load_in_4bit=True\`, generation is **extremely slow** and the GPU sits idle.
This used to work fine in [the previous release](https://github.com/acme/widget/releases/tag/v0.8.0).

### To Reproduce

Steps to reproduce the behavior:
1. Go to '...'
2. Run the script below
3. See error

\`\`\`python
from widget import Model
m = Model.load("tiny", load_in_4bit=True)
m.generate("hi")
\`\`\`

Traceback (most recent call last):
  File "run.py", line 3, in <module>
    m.generate("hi")
  File "/usr/lib/python3.11/site-packages/widget/model.py", line 88, in generate
    raise RuntimeError("CUDA error")
RuntimeError: CUDA error: device-side assert triggered

### Expected behavior

Generation should take a few seconds, not minutes. See https://acme.dev/bench for the numbers.

### Environment

- OS: Ubuntu 22.04
- Python version: 3.11.7
- Torch version: 2.4.1
- Bitsandbytes version: not installed
- \`widget\` version: 0.9.2

2024-05-01 12:00:01,123 INFO loading weights
[WARN] slow tokenizer

### Checklist

- [x] I have searched existing issues
- [ ] I have read the documentation
`;

describe("a bug report from a GitHub issue template", () => {
  it("keeps only the author's sentences, with their sections", () => {
    expect(guessFormat(BUG_REPORT)).toBe("markdown");
    expect(prose(BUG_REPORT)).toEqual([
      ["When I load a 4-bit model with", "bug_description"],
      ["generation is **extremely slow** and the GPU sits idle.\nThis used to work fine in", "bug_description"],
      ["the previous release", "bug_description"],
      ["Run the script below", "reproduction"],
      ["Generation should take a few seconds, not minutes. See", "expected"],
      ["for the numbers.", "expected"],
    ]);
    const ranges = proseRanges(BUG_REPORT);
    expect(ranges[0]!.section).toBe("describe the bug");
    // One paragraph cut by inline code and a link: the pieces share a block.
    expect(new Set(ranges.slice(0, 3).map((r) => r.block)).size).toBe(1);
    expect(ranges[3]!.block).not.toBe(ranges[0]!.block);
  });

  it("labels what it leaves out", () => {
    const kinds = byKind(BUG_REPORT);
    expect(kinds.html_comment).toEqual(["<!-- A clear and concise description of what the bug is. -->"]);
    expect(kinds.inline_code).toEqual(["`load_in_4bit=True`"]);
    expect(kinds.template_hint).toEqual(["Steps to reproduce the behavior:", "Go to '...'", "See error"]);
    expect(kinds.code).toHaveLength(1);
    expect(kinds.stack_trace).toEqual([
      "Traceback (most recent call last):",
      'File "run.py", line 3, in <module>',
      'm.generate("hi")',
      'File "/usr/lib/python3.11/site-packages/widget/model.py", line 88, in generate',
      'raise RuntimeError("CUDA error")',
      "RuntimeError: CUDA error: device-side assert triggered",
    ]);
    expect(kinds.env_dump).toEqual([
      "OS: Ubuntu 22.04",
      "Python version: 3.11.7",
      "Torch version: 2.4.1",
      "Bitsandbytes version: not installed",
      "`widget` version: 0.9.2",
    ]);
    expect(kinds.log).toEqual(["2024-05-01 12:00:01,123 INFO loading weights", "[WARN] slow tokenizer"]);
    expect(kinds.checklist).toEqual(["- [x] I have searched existing issues", "- [ ] I have read the documentation"]);
    expect(kinds.heading).toEqual([
      "### Describe the bug",
      "### To Reproduce",
      "### Expected behavior",
      "### Environment",
      "### Checklist",
    ]);
    expect(kinds.url).toEqual(["](https://github.com/acme/widget/releases/tag/v0.8.0)", "https://acme.dev/bench"]);
  });

  it("returns regions in order, without overlap, covering every non-blank character", () => {
    const regions = documentStructure(BUG_REPORT);
    let covered = 0;
    for (let i = 0; i < regions.length; i++) {
      const r = regions[i]!;
      expect(r.end).toBeGreaterThan(r.start);
      if (i > 0) expect(r.start).toBeGreaterThanOrEqual(regions[i - 1]!.end);
      covered += BUG_REPORT.slice(r.start, r.end).replace(/\s/g, "").length;
    }
    expect(covered).toBe(BUG_REPORT.replace(/\s/g, "").length);
  });
});

describe("a feature request from a template", () => {
  const text = `**Is your feature request related to a problem? Please describe.**
A clear and concise description of what the problem is. Ex. I'm always frustrated when [...]
I'm always frustrated when exporting notes loses all the tags.

**Describe the solution you'd like**
Please add an option to keep tags in the Markdown export.

**Describe alternatives you've considered**
I tried the CSV export, but it drops attachments.

**Additional context**
Add any other context or screenshots about the feature request here.
`;

  it("drops the template's prompts and maps bold pseudo-headings to roles", () => {
    expect(prose(text)).toEqual([
      ["I'm always frustrated when exporting notes loses all the tags.", "motivation"],
      ["Please add an option to keep tags in the Markdown export.", "feature_request"],
      ["I tried the CSV export, but it drops attachments.", "alternatives"],
    ]);
    expect(proseRanges(text).map((r) => r.section)).toEqual([
      "is your feature request related to a problem? please describe",
      "describe the solution you'd like",
      "describe alternatives you've considered",
    ]);
    expect(byKind(text).template_hint).toEqual([
      "A clear and concise description of what the problem is. Ex. I'm always frustrated when [...]",
      "Add any other context or screenshots about the feature request here.",
    ]);
  });

  it("reads an issue form's headings and empty answers", () => {
    const form = `### What happened?

The editor freezes whenever I paste a large table.

### Version

1.4.2

### What browsers are you seeing the problem on?

Firefox, Chrome

### Relevant log output

_No response_
`;
    expect(prose(form)).toEqual([["The editor freezes whenever I paste a large table.", "bug_description"]]);
    const kinds = byKind(form);
    expect(kinds.env_dump).toEqual(["1.4.2", "Firefox, Chrome"]);
    expect(kinds.template_hint).toEqual(["_No response_"]);
  });
});

describe("a forum post", () => {
  const text = `[quote="alice, post:3, topic:991"]
Sync has been broken for me since Tuesday.
[/quote]

Same here. After the update, \`sync --force\` does nothing and the app freezes on launch.

> Have you tried reinstalling? It fixed it for me.

Yes, twice. Honestly the new sync engine is a big step backwards.
`;

  it("leaves out quoted words and inline code", () => {
    expect(prose(text)).toEqual([
      ["Same here. After the update,", "other"],
      ["does nothing and the app freezes on launch.", "other"],
      ["Yes, twice. Honestly the new sync engine is a big step backwards.", "other"],
    ]);
    expect(byKind(text).quote).toEqual([
      '[quote="alice, post:3, topic:991"]\nSync has been broken for me since Tuesday.\n[/quote]',
      "> Have you tried reinstalling? It fixed it for me.",
    ]);
  });

  it("keeps prose inside <details>, takes <summary> for a heading and restores the section after it", () => {
    const details = `## Describe the bug

Dark mode ignores the system setting.

<details>
<summary>Full log</summary>

The log below was captured right after launch.

\`\`\`
[12:00:01] theme=light
\`\`\`

</details>

I would love a manual toggle.
`;
    expect(proseRanges(details).map((r) => [details.slice(r.start, r.end), r.section])).toEqual([
      ["Dark mode ignores the system setting.", "describe the bug"],
      ["The log below was captured right after launch.", "full log"],
      ["I would love a manual toggle.", "describe the bug"],
    ]);
  });
});

describe("plain text", () => {
  it("keeps an app review whole, less its URL", () => {
    const review = `Love this app!! The widgets are gorgeous but the battery drain is terrible since version 5.2.

Would give 5 stars if they fixed the login bug. https://example.com/support didn't help.`;
    expect(guessFormat(review)).toBe("plain");
    expect(prose(review)).toEqual([
      ["Love this app!! The widgets are gorgeous but the battery drain is terrible since version 5.2.", "other"],
      ["Would give 5 stars if they fixed the login bug.", "other"],
      ["didn't help.", "other"],
    ]);
    expect(byKind(review).url).toEqual(["https://example.com/support"]);
  });

  it("keeps a review's labels, shouting and lines that merely mention versions or errors", () => {
    const review = [
      "Battery: solid.",
      "Edit 2: 8 months in and everything is working great.",
      "I updated to 2.3.1 yesterday and it broke.",
      "WARNING: do not buy this laptop!",
      "Error: won't sync since the update.",
      "Make sure you ask for a room upgrade here, if possible.",
    ].join("\n");
    expect(prose(review, "plain").map(([t]) => t)).toEqual([review]);
    // Bold text is a heading only where it reads like one.
    expect(prose("**Great app**\n\n**Bugs:**\nNone so far.", "markdown")).toEqual([
      ["**Great app**", "other"],
      ["None so far.", "bug_description"],
    ]);
  });

  it("drops a transcript's time codes and log lines", () => {
    const transcript = `[00:00:05] Interviewer: How do you usually capture notes during meetings?
[00:00:09] Participant: Mostly on my phone. The search is fast, but tagging is a pain.
2024-03-02 10:15:22.431 ERROR recorder: buffer overrun (dropped 3 frames)
[00:00:21] Participant: I'd pay for a desktop app that syncs reliably.`;
    expect(guessFormat(transcript)).toBe("plain");
    expect(prose(transcript)).toEqual([
      ["Interviewer: How do you usually capture notes during meetings?", "other"],
      ["Participant: Mostly on my phone. The search is fast, but tagging is a pain.", "other"],
      ["Participant: I'd pay for a desktop app that syncs reliably.", "other"],
    ]);
    expect(byKind(transcript).log).toEqual(["2024-03-02 10:15:22.431 ERROR recorder: buffer overrun (dropped 3 frames)"]);
  });

  it("still finds stack traces and fenced code", () => {
    const text =
      "It crashes on start.\nTypeError: x is not a function\n    at run (/app/index.js:3:15)\n\n```\nnpm start\n```\nPlease fix.";
    expect(prose(text, "plain").map(([t]) => t)).toEqual(["It crashes on start.", "Please fix."]);
  });
});

describe("output pasted without a fence", () => {
  const text = `Running it from the CLI gives:
$ notes export --all
Error: Cannot find module 'sharp'
    at Function.Module._resolveFilename (node:internal/modules/cjs/loader:1039:15)
    at Object.<anonymous> (/app/index.js:3:15)

src/app.ts:12:5 - error TS2322: Type 'string' is not assignable to type 'number'.
thread 'main' panicked at src/main.rs:2:5:
called \`Option::unwrap()\` on a \`None\` value
note: run with \`RUST_BACKTRACE=1\` environment variable to display a backtrace

goroutine 1 [running]:
main.main()
	/tmp/sandbox/prog.go:8 +0x1d
exit status 2

Exception in thread "main" java.lang.NullPointerException
	at com.example.App.main(App.java:14)

System:
    OS: macOS 14.2
    CPU: (10) arm64 Apple M1 Pro
  Binaries:
    Node: 20.11.0 - /usr/local/bin/node

numpy==1.26.4
torch==2.2.1+cu121
Python 3.11.7

I think the new release is much slower than 1.3.`;

  it("is recognised line by line", () => {
    expect(prose(text).map(([t]) => t)).toEqual(["Running it from the CLI gives:", "I think the new release is much slower than 1.3."]);
    const kinds = byKind(text);
    expect(kinds.log).toContain("$ notes export --all");
    expect(kinds.log).toContain("src/app.ts:12:5 - error TS2322: Type 'string' is not assignable to type 'number'.");
    expect(kinds.stack_trace).toContain("Error: Cannot find module 'sharp'");
    expect(kinds.stack_trace).toContain("goroutine 1 [running]:");
    expect(kinds.stack_trace).toContain("at com.example.App.main(App.java:14)");
    expect(kinds.env_dump).toEqual([
      "System:",
      "OS: macOS 14.2",
      "CPU: (10) arm64 Apple M1 Pro",
      "Binaries:",
      "Node: 20.11.0 - /usr/local/bin/node",
      "numpy==1.26.4",
      "torch==2.2.1+cu121",
      "Python 3.11.7",
    ]);
  });
});

describe("issue forms and pasted output", () => {
  const FORM = [
    "### Problem",
    "",
    "The popup no longer closes on escape. It broke after upgrading to 0.9",
    "",
    "### Steps to reproduce",
    "",
    "nvim --clean",
    ":edit foo",
    ":set nowrap",
    "",
    "### Nvim version (nvim -v)",
    "",
    "NVIM v0.9.1 Build type: Release LuaJIT 2.1.1692616192",
    "",
    "### Operating system/version",
    "",
    "4.15.0-38-lowlatency #41-Ubuntu SMP PREEMPT Wed Oct 10 12:26:00 UTC 2018 x86_64 GNU/Linux",
    "",
    "### Terminal name/version",
    "",
    "kitty 0.26",
    "",
    "### $TERM environment variable",
    "",
    "xterm-kitty",
    "",
    "### Installation",
    "",
    "homebrew",
  ].join("\r\n");

  it("keeps an environment field's bare value out, and a sentence that mentions a version in", () => {
    expect(prose(FORM).map(([t]) => t)).toEqual(["The popup no longer closes on escape. It broke after upgrading to 0.9", "nvim --clean"]);
    const kinds = byKind(FORM);
    expect(kinds.env_dump).toEqual(expect.arrayContaining(["kitty 0.26", "xterm-kitty", "homebrew"]));
    expect(kinds.code).toEqual([":edit foo", ":set nowrap"]);
    expect(sectionRole("installation")).toBe("environment");
  });

  it("reads the old template's list, with a key's value on the next line", () => {
    const text = [
      "- Nvim version (nvim -v): v0.9.1",
      "- Vim behaves differently?: no",
      "- Operating system/version: 4.15.0-38-lowlatency #41-Ubuntu SMP PREEMPT Wed Oct 10 12:26:00 UTC 2018 x86_64 GNU/Linux",
      "- Terminal name/version:",
      "xfce4-terminal",
      "- `$TERM`: xterm-256color",
      "- Installation: homebrew",
      "",
      "Scrolling is much slower than in 0.8.",
    ].join("\n");
    expect(prose(text).map(([t]) => t)).toEqual(["Scrolling is much slower than in 0.8."]);
  });

  it("takes a <details> block on a Windows line ends for a block, not for the text below it", () => {
    const text =
      "Crashes on save.\r\n\r\n<details>\r\n<summary>Backtrace</summary>\r\n\r\n```\r\n[New LWP 12783]\r\n#0  0x00007f24ae0cea7c in pthread_kill ()\r\n```\r\n\r\n</details>\r\n";
    expect(prose(text).map(([t]) => t)).toEqual(["Crashes on save."]);
    expect(byKind(text).code).toEqual(["```\r\n[New LWP 12783]\r\n#0  0x00007f24ae0cea7c in pthread_kill ()\r\n```"]);
  });

  it("drops pip's boxed output, IPython's numbered frames and a heading left inside an HTML block", () => {
    const text = [
      "Building the extension fails:",
      "",
      "× Building wheel for mypkg (pyproject.toml) did not run successfully.",
      "│ exit code: 1",
      "╰─> [24 lines of output]",
      "note: This error originates from a subprocess, and is likely not a problem with pip.",
      "",
      "File ~/miniconda3/lib/python3.11/site-packages/mypkg/core.py:2134, in Client.run(self, name, process_id)",
      "   2133     process_id=process_id,",
      "-> 2134         name=name,",
      "",
      "<details>",
      "### Steps to reproduce the bug",
      "Run the build twice.",
      "</details>",
      "",
      "It broke after upgrading to 0.9",
    ].join("\n");
    expect(prose(text)).toEqual([
      ["Building the extension fails:", "other"],
      ["Run the build twice.", "reproduction"],
      ["It broke after upgrading to 0.9", "other"],
    ]);
  });

  it("drops labels, compiler notes, Lua tracebacks and glibc backtraces, and keeps short statements ending in a colon", () => {
    const text = [
      "Output:",
      "error: internal compiler error: unexpected panic",
      "note: the compiler unexpectedly panicked. this is a bug.",
      "note: we would appreciate a bug report: https://github.com/rust-lang/rust/blob/master/CONTRIBUTING.md#bug-reports",
      "",
      "E5108: Error executing lua: attempt to index a nil value",
      "stack traceback:",
      "        /usr/share/nvim/runtime/lua/vim/treesitter.lua:131: in function 'get_parser'",
      "        [C]: in function 'nvim_cmd'",
      "",
      "/usr/lib/librustrt.so(upcall_fail+0x190)[0x7f569710d550]",
      "",
      "The following crashes rustc:",
      "",
      "This works fine:",
    ].join("\n");
    expect(prose(text).map(([t]) => t)).toEqual(["The following crashes rustc:", "This works fine:"]);
  });
});

describe("offsets", () => {
  it("are UTF-16 indices, verbatim around astral characters and CRLF line breaks", () => {
    const text = "## 🐛 Bug\r\n\r\nThe 😀 picker `emoji()` is broken 🙁 on iOS.\r\nIt worked before.\r\n";
    const ranges = proseRanges(text);
    expect(ranges.map((r) => text.slice(r.start, r.end))).toEqual(["The 😀 picker", "is broken 🙁 on iOS.\r\nIt worked before."]);
    expect(ranges[0]!.start).toBe(text.indexOf("The"));
    expect(ranges[0]!.section).toBe("bug");
    expect(ranges[0]!.sectionRole).toBe("bug_description");
  });
});

describe("sectionRole", () => {
  it("maps headings of templates it has not seen by keyword family", () => {
    const roles: [string, string][] = [
      ["🐛 bug report", "bug_description"],
      ["what happened?", "bug_description"],
      ["steps to reproduce", "reproduction"],
      ["minimal reproducible example", "reproduction"],
      ["what did you expect to happen?", "expected"],
      ["observed behaviour", "actual"],
      ["current behavior", "actual"],
      ["system info", "environment"],
      ["desktop (please complete the following information)", "environment"],
      ["which version are you using?", "environment"],
      ["is your feature request related to a problem? please describe", "motivation"],
      ["use case", "motivation"],
      ["describe the solution you'd like", "feature_request"],
      ["proposed api", "feature_request"],
      ["describe alternatives you've considered", "alternatives"],
      ["workarounds", "alternatives"],
      ["❓ questions and help", "question"],
      ["additional context", "other"],
    ];
    for (const [heading, role] of roles) expect([heading, sectionRole(heading)]).toEqual([heading, role]);
    expect(sectionRole(null)).toBe("other");
  });
});

describe("guessFormat", () => {
  it("says markdown only where markdown shows", () => {
    expect(guessFormat("```js\nx()\n```")).toBe("markdown");
    expect(guessFormat("## Title\ntext")).toBe("markdown");
    expect(guessFormat("see [docs](https://x.dev)")).toBe("markdown");
    expect(guessFormat("<!-- hint -->\ntext")).toBe("markdown");
    expect(guessFormat("Great app, 5 stars. Would buy again!")).toBe("plain");
    expect(guessFormat("Ok: fast, cheap > expensive ones")).toBe("plain");
  });
});

const FRAGMENTS = [
  ...[
    "```",
    "~~~",
    "```js\n",
    "<!--",
    "-->",
    "\n",
    "\n\n",
    "\r\n",
    "# ",
    "## Describe the bug\n",
    "> ",
    ">",
    "- [x] ",
    "- ",
    "1. ",
    "    ",
  ],
  ...[
    "`",
    "``",
    "**",
    "__",
    "*",
    "_",
    "|",
    "|---|",
    "[",
    "]",
    "(",
    ")",
    "![i](u.png)",
    "[a](https://b.c)",
    "http://x.y/z",
    "www.a.b",
    "a@b.co ",
  ],
  ...[
    "<details>",
    "</details>",
    "<summary>",
    "</summary>",
    "<pre>",
    "</pre>",
    "<p>",
    "[quote]",
    "[/quote]",
    "**Bug:** ",
    "Expected behavior:\n",
  ],
  ...["Traceback (most recent call last):\n", '  File "a.py", line 1\n', "    at f (a.js:1:2)\n", "OS: Linux 5.1\n", "pkg==1.0\n"],
  ...["$ ls\n", "[INFO] x\n", "word ", "The app is great. ", "😀", "\uD800", "\t", "\u0000", "\u00a0", "\u2028"],
];

describe("any input", () => {
  const markdownish = fc
    .array(fc.oneof(fc.constantFrom(...FRAGMENTS), fc.string({ maxLength: 8 })), { maxLength: 40 })
    .map((a) => a.join(""));
  const input = fc.oneof(
    markdownish,
    fc.string({ unit: "binary", maxLength: 300 }),
    fc.string({ unit: "grapheme-composite", maxLength: 100 }),
  );
  const format = fc.constantFrom<Format | undefined>("markdown", "plain", undefined);

  it("gives sorted, non-overlapping regions in bounds and prose with no fence line or comment opener", () => {
    fc.assert(
      fc.property(input, format, (text, fmt) => {
        const regions = documentStructure(text, fmt);
        let previous = 0;
        for (const r of regions) {
          expect(r.start).toBeGreaterThanOrEqual(previous);
          expect(r.end).toBeGreaterThan(r.start);
          expect(r.end).toBeLessThanOrEqual(text.length);
          previous = r.end;
        }
        for (const r of proseRanges(text, fmt)) {
          const slice = text.slice(r.start, r.end);
          expect(slice).not.toMatch(/^\s*(?:```|~~~)/m);
          expect(slice).not.toContain("<!--");
          expect(slice.trim()).toBe(slice);
          expect(slice).toMatch(/\p{L}/u);
        }
      }),
      { numRuns: 3000 },
    );
  });

  it("never throws on pathological input", () => {
    for (const text of [
      "*a".repeat(20_000),
      "[a](".repeat(10_000),
      "> - ".repeat(5_000),
      "<!--".repeat(10_000),
      "`".repeat(30_000),
      "(".repeat(30_000),
    ]) {
      expect(() => documentStructure(text)).not.toThrow();
      expect(() => proseRanges(text, "plain")).not.toThrow();
    }
  });
});
