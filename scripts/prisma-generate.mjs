// Runs `prisma generate` without Prisma's binary host. Generating the client does not
// run the schema engine, but the CLI insists that one exists: when none is configured,
// point it at an empty placeholder file.
import { spawnSync } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

const env = { ...process.env, CHECKPOINT_DISABLE: "1", PRISMA_HIDE_UPDATE_MESSAGE: "1" };
if (!env.PRISMA_SCHEMA_ENGINE_BINARY || !existsSync(env.PRISMA_SCHEMA_ENGINE_BINARY)) {
  const placeholder = path.join(tmpdir(), "prisma-schema-engine-placeholder");
  writeFileSync(placeholder, "");
  env.PRISMA_SCHEMA_ENGINE_BINARY = placeholder;
}
const result = spawnSync(process.execPath, ["node_modules/prisma/build/index.js", "generate"], { stdio: "inherit", env });
process.exit(result.status ?? 1);
