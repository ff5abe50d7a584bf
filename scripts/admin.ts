// Every job kind registers its recovery and end listeners before a command runs (requeue-lost, requeue-stalled).
import "../src/job-kinds.js";
import { AdminCommandError, parseAdminCommand, runAdminCommand } from "../src/governance/admin/commands.js";
import { configOrExit } from "../src/platform/config.js";
import { closeDeps, createDeps } from "../src/platform/deps.js";

/**
 * `npm run admin -- <command> [args]`: operator commands (`npm run admin -- help` lists them).
 * The arguments are parsed before anything connects: `--help` or `-h` prints the usage, and a
 * malformed argument the usage with what is wrong, without touching PostgreSQL or Redis.
 * Exit status: 0 done (or help printed), 1 refused (e.g. the named account does not exist, or the
 * job's state is final), 2 wrong usage.
 */
const argv = process.argv.slice(2);

function fail(err: unknown): void {
  console.error((err as Error).message);
  process.exitCode = err instanceof AdminCommandError ? err.exitCode : 1;
}

let request: ReturnType<typeof parseAdminCommand> | undefined;
try {
  request = parseAdminCommand(argv);
} catch (err) {
  fail(err);
}
if (request && "help" in request) {
  console.log(request.help);
} else if (request) {
  const config = configOrExit(
    "admin",
    { ...process.env, AUTH_JWT_SECRET: process.env.AUTH_JWT_SECRET ?? "not-needed-for-admin-commands" },
    "text",
  );
  const deps = createDeps(config, "admin");
  try {
    console.log(await runAdminCommand(deps, argv));
  } catch (err) {
    fail(err);
  } finally {
    await closeDeps(deps);
  }
}
