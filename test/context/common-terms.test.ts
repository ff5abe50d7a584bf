import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keywordRanking } from "../../src/insights/context/repo.js";
import { keywordQuery } from "../../src/insights/context/service.js";
import { CommonTerms } from "../../src/insights/context/terms.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { signIn, type TestUser } from "./helpers.js";

let h: Harness;
let user: TestUser;
const ids: Record<string, string> = {};
beforeAll(async () => {
  h = await createHarness();
  user = await signIn(h);
  // "wallaby" is on every page of this database; "platypus" and "echidna" on one each.
  for (let i = 0; i < 12; i++) {
    ids[`w${i}`] = (await user.save({ title: `Note ${i}`, content: `wallaby wallaby note number${i}`, path: `w/${i}` })).body.id;
  }
  ids.platypus = (await user.save({ title: "Rare", content: "wallaby and platypus", path: "rare/platypus" })).body.id;
  ids.echidna = (await user.save({ title: "Rarer", content: "wallaby and echidna", path: "rare/echidna" })).body.id;
  await h.deps.db.$executeRawUnsafe("ANALYZE pages");
});
afterAll(() => h.close());

describe("common words in plain recall queries", () => {
  it("drops a word on most pages when rarer words were asked for, keeps it when it is all there is", async () => {
    const terms = new CommonTerms(h.deps.db);
    expect(await terms.informative(["wallaby", "platypus"])).toEqual(["platypus"]);
    expect(await terms.informative(["platypus", "the", "echidna"])).toEqual(["platypus", "echidna"]);
    expect(await terms.informative(["the", "wallaby"])).toEqual(["wallaby"]);
    expect(await terms.informative(["wallaby"])).toEqual(["wallaby"]);
  });

  it("makes only pages with the informative words keyword candidates, all-word pages first", async () => {
    const terms = new CommonTerms(h.deps.db);
    const query = await keywordQuery(terms, "wallaby platypus echidna");
    expect(query).toEqual({ all: "wallaby platypus echidna", any: "platypus or echidna" });
    const ranking = await keywordRanking(h.deps.db, user.id, query, undefined, 50);
    expect(new Set(ranking)).toEqual(new Set([ids.platypus, ids.echidna]));
    // Without statistics every word counts: all 14 pages are candidates.
    const all = await keywordRanking(h.deps.db, user.id, { all: "wallaby platypus", any: "wallaby or platypus" }, undefined, 50);
    expect(all).toHaveLength(14);
    expect(all[0]).toBe(ids.platypus);
  });

  it("still recalls the pages by that word alone", async () => {
    const res = await user.recall({ query: "wallaby", limit: 20 });
    expect(res.body.count).toBe(14);
  });
});
