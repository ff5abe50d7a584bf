import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminCommands } from "../../src/governance/admin/commands.js";
import { projectRoot } from "../../src/platform/paths.js";
import { bearer, createJob, newEntity } from "../collection/support.js";
import { ensureBuilt, npmScriptArgv } from "../helpers/compiled.js";
import { createHarness, type Harness, randomId } from "../helpers/harness.js";

/**
 * `npm run admin` as an operator runs it: the npm script's command (the compiled script in dist/)
 * in a child process, against this file's database and Redis prefix, judged by its output and exit status.
 */
let h: Harness;

beforeAll(async () => {
  await ensureBuilt();
  h = await createHarness();
});
afterAll(() => h.close());

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function admin(...args: string[]): Promise<Run> {
  const env = {
    PATH: process.env.PATH ?? "",
    DATABASE_URL: h.config.DATABASE_URL,
    REDIS_URL: h.config.REDIS_URL,
    REDIS_PREFIX: h.config.REDIS_PREFIX,
    LOG_LEVEL: "silent",
  };
  const root = projectRoot();
  const [node, ...command] = npmScriptArgv("admin");
  return new Promise((resolve) => {
    execFile(node, [...command, ...args], { cwd: root, env, timeout: 60_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === "number" ? err.code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

/** A user row exists once its user has made one authenticated request. */
async function signedInUser(): Promise<string> {
  const sub = randomId("operator-subject-");
  const res = await h.http.get("/agent/v1/connection").set("Authorization", `Bearer ${await h.token(sub)}`);
  expect(res.status).toBe(200);
  return sub;
}

describe("npm run admin", () => {
  it("help, --help and -h list every command and exit 0", async () => {
    for (const word of ["help", "--help", "-h"]) {
      const run = await admin(word);
      expect(run.code, `${word}: ${run.stderr}`).toBe(0);
      for (const command of Object.values(adminCommands)) expect(run.stdout, word).toContain(command.usage);
      expect(run.stdout).not.toMatch(/unknown command/);
    }
  });

  it("an unknown command lists the commands and exits 2", async () => {
    const run = await admin("no-such-command");
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/unknown command 'no-such-command'/);
    expect(run.stderr).toContain("grant-credits <workspace_id> <amount> [note]");
  });

  it("a missing argument is a usage error (exit 2)", async () => {
    const run = await admin("enable-raw-export");
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/usage: npm run admin -- enable-raw-export <sub>/);
  });

  it("account commands act on an existing account", async () => {
    const sub = await signedInUser();
    const enabled = await admin("enable-raw-export", sub);
    expect(enabled, enabled.stderr).toMatchObject({ code: 0, stdout: `raw export enabled for ${sub}\n` });
    expect((await h.deps.db.user.findUniqueOrThrow({ where: { sub } })).rawExportEnabled).toBe(true);
    const marked = await admin("mark-internal-agent", sub);
    expect(marked.code).toBe(0);
    expect((await h.deps.db.user.findUniqueOrThrow({ where: { sub } })).isInternalAgent).toBe(true);
    expect((await admin("unmark-internal-agent", sub)).code).toBe(0);
    expect((await admin("disable-raw-export", sub)).code).toBe(0);
    const user = await h.deps.db.user.findUniqueOrThrow({ where: { sub } });
    expect(user).toMatchObject({ rawExportEnabled: false, isInternalAgent: false });
  });

  it("every account command refuses an account that does not exist, changes nothing and exits 1", async () => {
    const sub = randomId("nobody-");
    for (const command of ["enable-raw-export", "disable-raw-export", "mark-internal-agent", "unmark-internal-agent"]) {
      const run = await admin(command, sub);
      expect(run.code, command).toBe(1);
      expect(run.stdout, command).toBe("");
      expect(run.stderr, command).toMatch(new RegExp(`no account with sub '${sub}'`));
    }
    expect(await h.deps.db.user.count({ where: { sub } })).toBe(0);
  });

  it("requeue-lost and requeue-stalled wait for Redis in a process that has just started, every time", async () => {
    for (let i = 0; i < 3; i++) {
      const lost = await admin("requeue-lost");
      expect(lost.code, lost.stderr).toBe(0);
      expect(lost.stdout).toMatch(/analyses: checked \d+, requeued \d+/);
      expect(lost.stderr).not.toMatch(/unavailable/);
      const stalled = await admin("requeue-stalled");
      expect(stalled.code, stalled.stderr).toBe(0);
      expect(stalled.stdout).toMatch(/unfinished collection job/);
    }
  }, 90_000);

  it("workspace, entity and job commands refuse subjects that do not exist (exit 1)", async () => {
    const missing = randomUUID();
    const credits = await admin("grant-credits", missing, "100");
    expect(credits.code).toBe(1);
    expect(credits.stderr).toMatch(new RegExp(`workspace ${missing} does not exist`));

    const enrichment = await admin("requeue-enrichment", missing);
    expect(enrichment.code).toBe(1);
    expect(enrichment.stderr).toMatch(new RegExp(`no entity ${missing}`));
    expect(enrichment.stdout).toBe("");

    const job = await admin("requeue-job", missing);
    expect(job.code).toBe(1);
    expect(job.stderr).toMatch(new RegExp(`no collection job ${missing}`));
  });

  it("--help and -h after any command print that command's usage and exit 0, acting on nothing", async () => {
    // A collection job whose queue entry is gone: what requeue-lost, requeue-stalled and requeue-job would put back.
    const token = await h.token();
    const entity = await newEntity(h, token, { name: "Helpco" });
    const created = await createJob(h, token, { entity_id: entity.id, objective: "Left as it is", platforms: ["twitter"] });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const row = await h.deps.db.collectionJob.findUniqueOrThrow({ where: { id: created.body.job_id } });
    const queue = h.deps.queues.get("collection");
    await (await queue.getJob(row.queueJobId))?.remove();

    // Every command with --help; -h with the commands that act on the queue.
    for (const [name, command] of Object.entries(adminCommands)) {
      for (const word of command.queue ? ["--help", "-h"] : ["--help"]) {
        // After the command, and after a valid argument too.
        const argv = name === "requeue-job" ? [name, row.id, word] : [name, word];
        const run = await admin(...argv);
        expect(run.code, `${argv.join(" ")}: ${run.stderr}`).toBe(0);
        expect(run.stdout, argv.join(" ")).toContain(`usage: npm run admin -- ${command.usage}`);
        expect(run.stdout, argv.join(" ")).toContain(command.summary);
        expect(run.stdout, argv.join(" ")).not.toMatch(/checked|requeued|queued \d|granted|enabled for|no collection job/);
        expect(run.stderr, argv.join(" ")).toBe("");
      }
    }
    expect(await queue.getJob(row.queueJobId)).toBeUndefined();
    expect(await h.deps.db.collectionJob.findUniqueOrThrow({ where: { id: row.id } })).toEqual(row);
    // The job was there to requeue all along.
    const requeued = await admin("requeue-job", row.id);
    expect(requeued, requeued.stderr).toMatchObject({ code: 0, stdout: `collection job ${row.id} requeued\n` });
  }, 120_000);

  it("a malformed argument prints the command's usage and exits 2, acting on nothing", async () => {
    const workspace = randomUUID();
    const cases: [string[], string][] = [
      [["requeue-lost", "abc"], "requeue-lost [older_than_seconds]"],
      [["requeue-lost", "99999999999999999999999"], "requeue-lost [older_than_seconds]"],
      [["requeue-lost", "-5"], "requeue-lost [older_than_seconds]"],
      [["requeue-lost", "1.5"], "requeue-lost [older_than_seconds]"],
      [["requeue-lost", "10", "20"], "requeue-lost [older_than_seconds]"],
      [["requeue-stalled", "abc"], "requeue-stalled [older_than_seconds]"],
      [["requeue-webhooks", "1e400"], "requeue-webhooks [older_than_seconds]"],
      [["requeue-webhooks", "--force"], "requeue-webhooks [older_than_seconds]"],
      [["requeue-enrichment", "not-an-entity"], "requeue-enrichment [entity_id]"],
      [["reanalyse", "xyz"], "reanalyse [entity_id]"],
      [["requeue-job", "not-a-job-id"], "requeue-job <collection_job_id>"],
      [["requeue-job"], "requeue-job <collection_job_id>"],
      [["grant-credits", workspace, "1e3"], "grant-credits <workspace_id> <amount> [note]"],
      [["grant-credits", workspace, "99999999999"], "grant-credits <workspace_id> <amount> [note]"],
      [["grant-credits", workspace, "0"], "grant-credits <workspace_id> <amount> [note]"],
      [["enable-raw-export", "a-sub", "another"], "enable-raw-export <sub>"],
    ];
    for (const [argv, usage] of cases) {
      const run = await admin(...argv);
      const what = `${argv.join(" ")}: ${run.stdout}${run.stderr}`;
      expect(run.code, what).toBe(2);
      expect(run.stdout, what).toBe("");
      expect(run.stderr, what).toContain(`usage: npm run admin -- ${usage}`);
      expect(run.stderr, what).not.toMatch(/Invalid Date|prisma|at .*\.js:\d+/i);
    }
    expect(await h.deps.db.creditLedger.count()).toBe(0);
  }, 120_000);

  it("requeue-job's refusal of a job whose state is final exits 1, printing why on stderr", async () => {
    const token = await h.token();
    const entity = await newEntity(h, token, { name: "Finalco" });
    const created = await createJob(h, token, { entity_id: entity.id, objective: "Stopped by its caller", platforms: ["twitter"] });
    const jobId = created.body.job_id as string;
    await h.http.post(`/agent/v1/ingest/collection/jobs/${jobId}/cancel`).set(bearer(token)).expect(200);
    const run = await admin("requeue-job", jobId);
    expect(run.code, run.stderr).toBe(1);
    expect(run.stdout).toBe("");
    expect(run.stderr).toBe(
      `collection job ${jobId} is cancelled, which is final; nothing to requeue (create a new job to collect again)\n`,
    );
    expect((await h.deps.db.collectionJob.findUniqueOrThrow({ where: { id: jobId } })).status).toBe("cancelled");
  });
});
