import { defineConfig } from "prisma/config";

// The CLI reads the connection URL only for commands that talk to the database.
// `prisma generate` needs none, so a missing DATABASE_URL must not break it.
export default defineConfig({
  schema: "prisma/schema.prisma",
  migrations: { path: "prisma/migrations" },
  datasource: { url: process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres" },
});
