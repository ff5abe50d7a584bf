import { runAdminCommand } from "../src/admin/commands.js";
import { loadConfig } from "../src/platform/config.js";
import { closeDeps, createDeps } from "../src/platform/deps.js";

/** `npm run admin -- <command> [args]`: operator commands (see `npm run admin -- help`). */
const config = loadConfig({ ...process.env, AUTH_JWT_SECRET: process.env.AUTH_JWT_SECRET ?? "not-needed-for-admin-commands" });
const deps = createDeps(config, "admin");
try {
  const output = await runAdminCommand(deps, process.argv.slice(2));
  console.log(output);
} catch (err) {
  console.error((err as Error).message);
  process.exitCode = 2;
} finally {
  await closeDeps(deps);
}
