import type { Harness } from "../helpers/harness.js";

/** A fresh user with an entity of their own (through the real onboarding route). */
export async function userWithEntity(h: Harness) {
  const token = await h.token();
  const res = await h.http
    .post("/api/entities/onboarding")
    .set("Authorization", `Bearer ${token}`)
    .send({ company: { name: "Notes Co" } });
  if (res.status !== 201) throw new Error(`onboarding failed: ${res.status} ${JSON.stringify(res.body)}`);
  return { token, entityId: res.body.company.id as string, workspaceId: res.body.workspace_id as string };
}

/** Polls a condition until it holds or the deadline passes (no fixed sleeps). */
export async function eventually<T>(probe: () => Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let pause = 20;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error("condition not met before the deadline");
    await new Promise((resolve) => setTimeout(resolve, pause));
    pause = Math.min(pause * 2, 200);
  }
}
