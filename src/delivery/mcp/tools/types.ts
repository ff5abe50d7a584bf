import type { z } from "zod";
import type { CallContext } from "../invoke.js";

/** A tool's arguments as the client sent them (an object; unknown fields are ignored). */
export type Args = Record<string, unknown>;

/** One mode of a tool: what it does, the HTTP routes it stands for, and how it calls them. */
export interface Mode {
  summary: string;
  /** The equivalent routes, "METHOD /path"; empty for a mode this service does not serve. */
  routes: readonly string[];
  run: (ctx: CallContext, args: Args) => Promise<Record<string, unknown>>;
}

/**
 * A tool of the reference client's contract (`recall`, `analyze`, `ingest`): one argument
 * selects the mode, the others are the mode's inputs.
 */
export interface ToolDefinition {
  name: string;
  title: string;
  intro: string;
  /** The argument that selects the mode. */
  selector: "mode" | "action" | "destination";
  /** The mode when the selector is absent or null. */
  defaultMode: (args: Args) => string;
  modes: Record<string, Mode>;
  /** Describes the arguments in tools/list; each mode's route validates what it receives. */
  inputSchema: z.ZodObject;
}
