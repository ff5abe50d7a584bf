import { configOrExit } from "../src/platform/config.js";
import { ensureDatabase } from "../src/platform/database-admin.js";
import { MIGRATIONS_DIR, migrate } from "../src/platform/migrate.js";

/** `npm run db:migrate`: creates the database if it is missing, then applies pending migrations. */
const env = configOrExit(
  "db:migrate",
  { ...process.env, AUTH_JWT_SECRET: process.env.AUTH_JWT_SECRET ?? "not-needed-for-migrations" },
  "text",
);
await ensureDatabase(env.DATABASE_URL);
const { applied } = await migrate(env.DATABASE_URL, MIGRATIONS_DIR, (line) => console.log(line));
console.log(applied.length === 0 ? "database is up to date" : `${applied.length} migration(s) applied`);
