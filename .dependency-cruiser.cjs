/**
 * Import rules checked in CI (`npm run check:deps`, dependency-cruiser): the layers of the source tree
 * (docs/architecture.md, "Layout"). A rule that fails names the importing module and what it imported.
 * Cycles are checked apart (`npm run check:cycles`).
 */
/** One rule per area: it may not import any area above it. */
function areaRules(order) {
  return order.slice(0, -1).map((area, i) => ({
    name: `${area}-imports-no-area-above`,
    comment: `src/${area} imports the platform and ${i === 0 ? "no other area" : `the areas below it (${order.slice(0, i).join(", ")})`}; never ${order.slice(i + 1).join(", ")}.`,
    severity: "error",
    from: { path: `^src/${area}/` },
    to: { path: `^src/(${order.slice(i + 1).join("|")})/` },
  }));
}

module.exports = {
  forbidden: [
    // The areas, lowest first: each imports the platform and the areas below it, never one above
    // (docs/architecture.md, "Areas"; each area's README.md).
    ...areaRules(["access", "insights", "intake", "workflows", "delivery", "governance"]),
    {
      name: "areas-import-no-composition-root",
      comment:
        "The composition roots (the app, the route table, the job-kind registrations, the server) see every area; no area imports them.",
      severity: "error",
      from: { path: "^src/(access|insights|intake|workflows|delivery|governance|jobs|platform)/" },
      to: { path: "^src/(app|routes|job-kinds|server)\\.ts$" },
    },
    {
      name: "platform-imports-no-domain",
      comment:
        "src/platform is the bottom layer (config, database, Redis, queues, HTTP plumbing): it imports only itself and the generated Prisma client.",
      severity: "error",
      from: { path: "^src/platform/" },
      to: { path: "^src/", pathNot: ["^src/platform/", "^src/generated/"] },
    },
    {
      name: "jobs-import-no-domain",
      comment:
        "src/jobs is the shared job lifecycle: the kinds register themselves with it (src/job-kinds.ts), so it imports only itself and the platform.",
      severity: "error",
      from: { path: "^src/jobs/" },
      to: { path: "^src/", pathNot: ["^src/jobs/", "^src/platform/", "^src/generated/"] },
    },
    {
      name: "src-imports-no-worker-entry",
      comment:
        "The web process (src/server.ts) and the worker process (workers/) are separate entry points: nothing under src/ imports the worker's processors or runtime.",
      severity: "error",
      from: { path: "^src/" },
      to: { path: "^workers/" },
    },
    {
      name: "worker-imports-no-web-app",
      comment: "The worker process does not load the web application (routes, the Express app, the HTTP server).",
      severity: "error",
      from: { path: "^workers/" },
      to: { path: ["^src/app\\.ts$", "^src/server\\.ts$", "^src/routes\\.ts$", "/routes\\.ts$"] },
    },
    {
      name: "no-scripts-or-bench-from-runtime",
      comment: "Running code (src/, workers/) never imports operator scripts, benchmarks or tests.",
      severity: "error",
      from: { path: "^(src|workers)/" },
      to: { path: "^(scripts|bench|test)/" },
    },
    {
      name: "domain-routes-only-from-the-route-table",
      comment:
        "A domain's routes (HTTP) are mounted by the route table only; services, jobs and other domains call services, never routes.",
      severity: "error",
      from: { path: "^src/", pathNot: ["^src/routes\\.ts$", "^src/app\\.ts$", "/routes\\.ts$", "/routes/"] },
      to: { path: "/routes\\.ts$" },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "^src/generated/" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default"],
      extensions: [".ts", ".js"],
    },
  },
};
