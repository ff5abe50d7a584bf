import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { markupJudge } from "../../bench/quality/feedback/markup-oracle.js";

/** The judge's verdict on one line of `text` (its first occurrence). */
function kindOf(text: string, line: string) {
  const at = text.indexOf(line);
  if (at < 0) throw new Error(`no ${line} in the text`);
  return markupJudge(text)(at, at + line.length);
}

const NEOVIM_FORM = [
  "### Problem",
  "",
  "The cursor jumps to the first line after :e!, which it did not do before.",
  "It broke after upgrading to 0.9",
  "",
  "### Steps to reproduce",
  "",
  "nvim --clean",
  "",
  "### Nvim version (nvim -v)",
  "",
  "v0.9.1",
  "",
  "### Operating system/version",
  "",
  "macOS 13.4",
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

describe("the markup judge", () => {
  it("judges an issue form's headings and environment values as markup, and its sentences as prose", () => {
    expect(kindOf(NEOVIM_FORM, "### Steps to reproduce")).toBe("heading");
    expect(kindOf(NEOVIM_FORM, "v0.9.1")).toBe("dump");
    expect(kindOf(NEOVIM_FORM, "kitty 0.26")).toBe("dump");
    expect(kindOf(NEOVIM_FORM, "xterm-kitty")).toBe("dump");
    expect(kindOf(NEOVIM_FORM, "homebrew")).toBe("dump");
    expect(kindOf(NEOVIM_FORM, "The cursor jumps to the first line")).toBeNull();
    expect(kindOf(NEOVIM_FORM, "It broke after upgrading to 0.9")).toBeNull();
  });

  it("judges the template's environment list, version lines and uname output as dumps", () => {
    const text = [
      "- Nvim version (nvim -v): v0.9.1",
      "- Operating system/version: 4.15.0-38-lowlatency #41-Ubuntu SMP PREEMPT Wed Oct 10 12:26:00 UTC 2018 x86_64 GNU/Linux",
      "- Terminal name/version: kitty 0.26",
      "- Installation: homebrew",
      "",
      "Python 3.11.7",
      "numpy==1.26.4",
      "",
      "Since 0.9.1 the popup no longer closes when I press escape.",
    ].join("\n");
    for (const line of [
      "Nvim version (nvim -v): v0.9.1",
      "Operating system/version: 4.15.0",
      "Terminal name/version",
      "Installation: homebrew",
      "Python 3.11.7",
      "numpy",
    ]) {
      expect(kindOf(text, line), line).toBe("dump");
    }
    expect(kindOf(text, "Since 0.9.1 the popup no longer closes when I press escape.")).toBeNull();
  });

  it("judges fenced, indented and unfenced code, and log and trace lines", () => {
    const text = [
      "The call fails:",
      "",
      "```python",
      "client.run(process_id=process_id)",
      "```",
      "",
      "    indented code",
      "",
      "Traceback (most recent call last):",
      '  File "app.py", line 3, in <module>',
      "process_id=process_id,",
      "2134         name=name,",
      "╰─> [24 lines of output]",
      '[ERROR][2023-07-26 15:26:17] .../vim/lsp/rpc.lua:675 "rpc" failed',
      "error[E0308]: mismatched types",
      "",
      "I expected the call to succeed.",
    ].join("\n");
    expect(kindOf(text, "client.run(process_id=process_id)")).toBe("code");
    expect(kindOf(text, "indented code")).toBe("code");
    expect(kindOf(text, "process_id=process_id,")).toBe("code");
    for (const line of [
      "Traceback (most recent call last):",
      'File "app.py", line 3',
      "2134         name=name,",
      "╰─> [24 lines of output]",
      "[ERROR][2023",
      "error[E0308]",
    ]) {
      expect(kindOf(text, line), line).toBe("log");
    }
    expect(kindOf(text, "I expected the call to succeed.")).toBeNull();
  });

  it("judges template hints, and keeps a request that is not one", () => {
    const text = [
      "<!-- describe the bug -->",
      "Please provide a minimal reproduction.",
      "- [x] I have searched the existing issues",
      "_No response_",
      "",
      "Please add a dark theme to the settings page.",
    ].join("\n");
    expect(kindOf(text, "<!-- describe the bug -->")).toBe("hint");
    expect(kindOf(text, "Please provide a minimal reproduction.")).toBe("hint");
    expect(kindOf(text, "[x] I have searched the existing issues")).toBe("hint");
    expect(kindOf(text, "_No response_")).toBe("hint");
    expect(kindOf(text, "Please add a dark theme to the settings page.")).toBeNull();
  });

  it("shares no code with the engine", () => {
    for (const file of ["markup-oracle.ts", "markup-rules.ts"]) {
      const source = readFileSync(new URL(`../../bench/quality/feedback/${file}`, import.meta.url), "utf8");
      const imports = [...source.matchAll(/from\s+["']([^"']+)["']/g)].map((m) => m[1]);
      expect(
        imports.filter((i) => i?.includes("src/")),
        file,
      ).toEqual([]);
    }
  });
});
