import { configDefaults, defineConfig } from "vitest/config";

/**
 * Two projects. `single` runs every suite against one Redis node. `cluster` runs the suites
 * that lean on Redis (queues and workers, the analysis relay, rate limits, worker failure,
 * cancellation, requeue after a Redis loss, workflow-run continuations, webhooks) again
 * against a local three-master Redis Cluster started once for the run (see
 * test/global-setup.ts), plus the cluster-only suites in test/cluster/ (failover, routines
 * and many processes). `npx vitest run --project single <files>` runs files against one node.
 */
const clusterSuites = [
  "test/collection/create.test.ts",
  "test/collection/resume.test.ts",
  "test/collection/stalled.test.ts",
  "test/analysis/relay.test.ts",
  "test/analysis/run-stream.test.ts",
  "test/analysis/last-event-id.test.ts",
  "test/reliability/rate-limit.test.ts",
  "test/reliability/worker-crash.test.ts",
  "test/jobs/cancel-collection.test.ts",
  "test/jobs/cancel-analysis.test.ts",
  "test/jobs/requeue-lost.test.ts",
  "test/jobs/run-steps.test.ts",
  "test/jobs/job-webhooks.test.ts",
  "test/jobs/cancel-notes.test.ts",
  "test/notes/sync.test.ts",
  "test/webhooks/delivery.test.ts",
  "test/webhooks/slots.test.ts",
  "test/routines/dispatch.test.ts",
  "test/cluster/**/*.test.ts",
];

export default defineConfig({
  test: {
    globalSetup: ["test/global-setup.ts"],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    pool: "forks",
    maxWorkers: 3,
    reporters: ["default"],
    projects: [
      {
        test: {
          name: "single",
          include: ["test/**/*.test.ts"],
          exclude: [...configDefaults.exclude, "test/cluster/**"],
        },
      },
      {
        test: {
          name: "cluster",
          include: clusterSuites,
          provide: { redisMode: "cluster" },
        },
      },
    ],
  },
});
