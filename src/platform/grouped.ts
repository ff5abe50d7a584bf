/**
 * Group commit for one statement. A call made while the statement is in flight waits for it, then goes
 * out with the calls that queued meanwhile as one run: alone, a call goes out at once; under load, one
 * statement serves many calls (a worker claiming the jobs of 32 slots at once sends a few statements,
 * not 32). Calls for a key already in the run wait for the next one, so a key is never in a run twice.
 * When a run fails, its keys are tried one at a time, so a key whose statement fails fails only its own
 * call. `identity` names what makes two keys the same (default: the key itself), for keys that carry
 * values besides their identity (a row to insert under its id); `run` answers by the key objects it got.
 */
export function grouped<K, R>(
  run: (keys: K[]) => Promise<Map<K, R>>,
  max = 64,
  identity: (key: K) => unknown = (key) => key,
): (key: K) => Promise<R | undefined> {
  type Call = { key: K; resolve: (value: R | undefined) => void; reject: (err: unknown) => void };
  let waiting: Call[] = [];
  let busy = false;

  const take = (): Call[] => {
    const batch: Call[] = [];
    const keys = new Set<unknown>();
    const later: Call[] = [];
    for (const call of waiting) {
      const id = identity(call.key);
      if (batch.length < max && !keys.has(id)) {
        batch.push(call);
        keys.add(id);
      } else later.push(call);
    }
    waiting = later;
    return batch;
  };

  const send = async (batch: Call[]) => {
    try {
      const results = await run(batch.map((c) => c.key));
      for (const call of batch) call.resolve(results.get(call.key));
    } catch (err) {
      if (batch.length === 1) {
        batch[0]!.reject(err);
        return;
      }
      for (const call of batch) await send([call]);
    }
  };

  const drain = async () => {
    busy = true;
    try {
      while (waiting.length > 0) await send(take());
    } finally {
      busy = false;
    }
  };

  return (key) =>
    new Promise<R | undefined>((resolve, reject) => {
      waiting.push({ key, resolve, reject });
      if (!busy) void drain();
    });
}
