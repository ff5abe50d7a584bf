// Every job kind registers its recovery and end listeners before a command runs (requeue-lost, requeue-stalled).
import "../src/job-kinds.js";
import { AdminCommandError, adminHelp, runAdminCommand, wantsHelp } from "../src/governance/admin/commands.js";
import { configOrExit } from "../src/platform/config.js";
import { closeDeps, createDeps } from "../src/platform/deps.js";

/**
 * `npm run admin -- <command> [args]`: operator commands (`npm run admin -- help` lists them).
 * Exit status: 0 done, 1 refused (e.g. the named account does not exist), 2 wrong usage.
 */
const argv = process.argv.slice(2);
if (wantsHelp(argv)) {
  console.log(adminHelp());
} else {
  const config = configOrExit(
    "admin",
    { ...process.env, AUTH_JWT_SECRET: process.env.AUTH_JWT_SECRET ?? "not-needed-for-admin-commands" },
    "text",
  );
  const deps = createDeps(config, "admin");
  try {
    const output = await runAdminCommand(deps, argv);
    console.log(output);
  } catch (err) {
    console.error((err as Error).message);
    process.exitCode = err instanceof AdminCommandError ? err.exitCode : 1;
  } finally {
    await closeDeps(deps);
  }
}
