import { type Harness, randomId } from "../helpers/harness.js";

export const auth = (token: string) => ({ Authorization: `Bearer ${token}` });

/** A signed-in person: their bearer and user id (the user row exists once they made a request). */
export async function person(h: Harness): Promise<{ token: string; userId: string }> {
  const sub = randomId("person-");
  const token = await h.token(sub);
  await h.http.get("/agent/v1/connection").set(auth(token)).expect(200);
  return { token, userId: (await h.deps.db.user.findUniqueOrThrow({ where: { sub } })).id };
}
