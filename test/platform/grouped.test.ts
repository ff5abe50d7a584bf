import { describe, expect, it } from "vitest";
import { grouped } from "../../src/platform/grouped.js";

/** Group commit: the calls that queue while a statement is in flight go out together in the next one. */
function recorder(fail: (keys: string[]) => boolean = () => false) {
  const runs: string[][] = [];
  const release: (() => void)[] = [];
  const call = grouped(async (keys: string[]) => {
    runs.push(keys);
    await new Promise<void>((resolve) => release.push(resolve));
    if (fail(keys)) throw new Error(`refused ${keys.join(",")}`);
    return new Map(keys.map((k) => [k, `row ${k}`]));
  }, 3);
  /** Lets every run that is waiting finish, until none is left. */
  const settle = async () => {
    for (let i = 0; i < 50; i++) {
      await new Promise((resolve) => setImmediate(resolve));
      const next = release.shift();
      if (next) next();
    }
  };
  return { call, runs, settle };
}

describe("grouped", () => {
  it("sends a lone call at once, and the calls made meanwhile together, at most `max` a run", async () => {
    const { call, runs, settle } = recorder();
    const first = call("a");
    expect(runs).toEqual([["a"]]);
    const rest = ["b", "c", "d", "e"].map((k) => call(k));
    await settle();
    expect(await first).toBe("row a");
    expect(await Promise.all(rest)).toEqual(["row b", "row c", "row d", "row e"]);
    expect(runs).toEqual([["a"], ["b", "c", "d"], ["e"]]);
  });

  it("never puts a key in one run twice", async () => {
    const { call, runs, settle } = recorder();
    const calls = [call("a"), call("b"), call("b"), call("c")];
    await settle();
    expect(await Promise.all(calls)).toEqual(["row a", "row b", "row b", "row c"]);
    expect(runs).toEqual([["a"], ["b", "c"], ["b"]]);
  });

  it("tries a failed run's keys one at a time, so only the key that fails alone is refused", async () => {
    const { call, runs, settle } = recorder((keys) => keys.includes("bad"));
    const calls = [call("a"), call("b"), call("bad"), call("c")].map((p) =>
      p.then(
        (v) => v,
        (err: Error) => err.message,
      ),
    );
    await settle();
    expect(await Promise.all(calls)).toEqual(["row a", "row b", "refused bad", "row c"]);
    expect(runs).toEqual([["a"], ["b", "bad", "c"], ["b"], ["bad"], ["c"]]);
  });

  it("groups keys by their identity: two values under one id never share a run, and each call gets its own answer", async () => {
    const runs: string[][] = [];
    const release: (() => void)[] = [];
    type Row = { id: string; value: string };
    const call = grouped(
      async (keys: Row[]) => {
        runs.push(keys.map((k) => `${k.id}=${k.value}`));
        await new Promise<void>((resolve) => release.push(resolve));
        return new Map(keys.map((k) => [k, k.value.toUpperCase()]));
      },
      64,
      (key) => key.id,
    );
    const calls = [
      call({ id: "1", value: "a" }),
      call({ id: "1", value: "b" }),
      call({ id: "2", value: "c" }),
      call({ id: "1", value: "d" }),
    ];
    for (let i = 0; i < 20; i++) {
      await new Promise((resolve) => setImmediate(resolve));
      release.shift()?.();
    }
    expect(await Promise.all(calls)).toEqual(["A", "B", "C", "D"]);
    expect(runs).toEqual([["1=a"], ["1=b", "2=c"], ["1=d"]]);
  });

  it("answers undefined for a key its run did not answer", async () => {
    const call = grouped(async (keys: string[]) => new Map(keys.filter((k) => k !== "gone").map((k) => [k, k])));
    expect(await Promise.all([call("here"), call("gone")])).toEqual(["here", undefined]);
  });
});
