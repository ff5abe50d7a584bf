import { isUuid } from "../../access/workspaces/access.js";

/**
 * The one parser of operator commands' arguments. A command declares its arguments; the parser
 * answers either that help was asked for (`--help` or `-h` anywhere before `--`: the command's usage,
 * nothing is done) or the arguments, each checked and converted. Anything else (an unknown option, a
 * value of the wrong form, one argument too many or too few) is a usage error: exit 2, nothing done.
 * `--` ends the options, for a value that starts with `-`.
 */
export type ArgKind =
  /** Any non-empty text (an account's sub). */
  | "text"
  /** A uuid (a workspace, an entity, a job). */
  | "uuid"
  /** Whole seconds, 0 to MAX_SECONDS. */
  | "seconds"
  /** A whole number of credits, 1 to MAX_AMOUNT. */
  | "amount"
  /** Every remaining argument, joined by spaces (a note). */
  | "rest";

export interface ArgSpec {
  name: string;
  kind: ArgKind;
  optional?: boolean;
}

/** Ten years: an age beyond it is a typo, and every Date it makes is valid. */
export const MAX_SECONDS = 315_360_000;
/** The ledger's amounts are PostgreSQL integers. */
export const MAX_AMOUNT = 2_147_483_647;

const HELP_WORDS = new Set(["--help", "-h"]);

/** The arguments as the usage line writes them: `<required> [optional]`. */
export const usageOf = (name: string, args: readonly ArgSpec[]) =>
  [name, ...args.map((a) => (a.optional || a.kind === "rest" ? `[${a.name}]` : `<${a.name}>`))].join(" ");

export type ArgValues = Record<string, string | number | undefined>;

export type Parsed = { help: true } | { help: false; values: ArgValues };

/** Why an argument list is refused: the caller prints it with the command's usage and exits 2. */
export class UsageError extends Error {
  override name = "UsageError";
}

const WHOLE = /^\d+$/;

function convert(spec: ArgSpec, raw: string): string | number {
  switch (spec.kind) {
    case "text":
      if (raw.length === 0) throw new UsageError(`${spec.name} is empty`);
      return raw;
    case "uuid":
      if (!isUuid(raw)) throw new UsageError(`${spec.name} '${raw}' is not a uuid`);
      return raw.toLowerCase();
    case "seconds":
      if (!WHOLE.test(raw) || Number(raw) > MAX_SECONDS) {
        throw new UsageError(`${spec.name} '${raw}' is not a whole number of seconds from 0 to ${MAX_SECONDS} (ten years)`);
      }
      return Number(raw);
    case "amount":
      if (!WHOLE.test(raw) || Number(raw) < 1 || Number(raw) > MAX_AMOUNT) {
        throw new UsageError(`${spec.name} '${raw}' is not a whole number from 1 to ${MAX_AMOUNT}`);
      }
      return Number(raw);
    case "rest":
      return raw;
  }
}

export function parseArgs(specs: readonly ArgSpec[], argv: readonly string[]): Parsed {
  const positional: string[] = [];
  let options = true;
  for (const arg of argv) {
    if (options && arg === "--") options = false;
    else if (options && HELP_WORDS.has(arg)) return { help: true };
    else if (options && arg.length > 1 && arg.startsWith("-")) throw new UsageError(`unknown option '${arg}'`);
    else positional.push(arg);
  }
  const values: ArgValues = {};
  let at = 0;
  for (const spec of specs) {
    if (spec.kind === "rest") {
      values[spec.name] = positional.length > at ? positional.slice(at).join(" ") : undefined;
      at = positional.length;
      continue;
    }
    const raw = positional[at];
    if (raw === undefined) {
      if (!spec.optional) throw new UsageError(`${spec.name} is missing`);
      continue;
    }
    values[spec.name] = convert(spec, raw);
    at += 1;
  }
  if (at < positional.length) throw new UsageError(`unexpected argument '${positional[at]}'`);
  return { help: false, values };
}
