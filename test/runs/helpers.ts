import { expect } from "vitest";
import { runAdminCommand } from "../../src/governance/admin/commands.js";
import type { Harness } from "../helpers/harness.js";

/** Onboards a company with research objectives and returns its ids and a bearer. */
export async function onboardCompany(h: Harness, options: { platforms?: string[]; objectives?: number; credits?: number } = {}) {
  const token = await h.token();
  const res = await h.http
    .post("/api/entities/onboarding")
    .set("Authorization", `Bearer ${token}`)
    .send({
      company: { name: "Acme Analytics", url: "https://acme.example", keywords: ["acme"], platforms: options.platforms ?? ["hackernews"] },
      research_objectives: Array.from({ length: options.objectives ?? 2 }, (_, i) => ({
        id: `obj-${i + 1}`,
        title: `Objective ${i + 1}`,
        question: `What do developers say about Acme feature ${i + 1}?`,
      })),
    });
  expect(res.status).toBe(201);
  const entityId = res.body.company.id as string;
  const workspaceId = res.body.workspace_id as string;
  if (options.credits) await runAdminCommand(h.deps, ["grant-credits", workspaceId, String(options.credits)]);
  const skills = await h.http.get(`/api/entities/${entityId}/skills`).set("Authorization", `Bearer ${token}`);
  expect(skills.status).toBe(200);
  return { token, entityId, workspaceId, skills: skills.body.skills as { id: string; revision: number }[] };
}

/** The ledger's invariant: balance = grants − charges of finished runs − maxima reserved by open runs. */
export async function expectLedgerConsistent(h: Harness, workspaceId: string) {
  const entries = await h.deps.db.creditLedger.findMany({ where: { workspaceId } });
  const sum = entries.reduce((n, e) => n + e.amount, 0);
  const runs = await h.deps.db.workflowRun.findMany({ where: { workspaceId } });
  const grants = entries.filter((e) => e.kind === "grant").reduce((n, e) => n + e.amount, 0);
  const open = runs.filter((r) => ["queued", "running"].includes(r.status)).reduce((n, r) => n + r.maxChargeCredits, 0);
  const charged = runs.reduce((n, r) => n + r.chargedCredits, 0);
  expect(sum).toBe(grants - charged - open);
  for (const run of runs) {
    const own = entries.filter((e) => e.runId === run.id);
    expect(own.filter((e) => e.kind === "reserve")).toHaveLength(1);
    expect(run.chargedCredits).toBeLessThanOrEqual(run.maxChargeCredits);
    if (!["queued", "running"].includes(run.status)) {
      expect(own.reduce((n, e) => n + e.amount, 0) + run.chargedCredits).toBe(0);
    }
  }
  const api = await h.deps.db.$queryRaw<
    { balance: bigint }[]
  >`SELECT COALESCE(SUM(amount),0)::bigint AS balance FROM credit_ledger WHERE workspace_id = ${workspaceId}::uuid`;
  expect(Number(api[0]?.balance)).toBe(sum);
  return sum;
}

/** Checks the ledger invariant for every workspace that has ledger entries. */
export async function expectAllLedgersConsistent(h: Harness) {
  const workspaces = await h.deps.db.creditLedger.findMany({ distinct: ["workspaceId"], select: { workspaceId: true } });
  for (const { workspaceId } of workspaces) await expectLedgerConsistent(h, workspaceId);
}
