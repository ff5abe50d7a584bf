import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * The benchmark's two local receivers: a silent one that accepts every request and never answers
 * (counting the requests open at once, in all and per path), and a healthy one that answers 204 at
 * once and notes when each `webhook-id` arrived.
 */
async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function shut(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

export interface SilentStats {
  arrived: number;
  maxOpen: number;
  maxOpenPerPath: number;
}

export async function startSilent() {
  const openPerPath = new Map<string, number>();
  let open = 0;
  let stats: SilentStats = { arrived: 0, maxOpen: 0, maxOpenPerPath: 0 };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = req.url ?? "/";
    req.resume();
    open += 1;
    const onPath = (openPerPath.get(path) ?? 0) + 1;
    openPerPath.set(path, onPath);
    stats.arrived += 1;
    stats.maxOpen = Math.max(stats.maxOpen, open);
    stats.maxOpenPerPath = Math.max(stats.maxOpenPerPath, onPath);
    res.on("close", () => {
      open -= 1;
      openPerPath.set(path, (openPerPath.get(path) ?? 1) - 1);
    });
  });
  const base = await listen(server);
  return {
    base,
    /** The figures since the last reset; `reset` also drops every open connection. */
    stats: () => ({ ...stats }),
    reset: () => {
      server.closeAllConnections();
      stats = { arrived: 0, maxOpen: 0, maxOpenPerPath: 0 };
    },
    close: () => shut(server),
  };
}

export async function startHealthy() {
  const arrivals = new Map<string, number>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    req.on("end", () => {
      const id = String(req.headers["webhook-id"]);
      if (!arrivals.has(id)) arrivals.set(id, performance.timeOrigin + performance.now());
      res.writeHead(204).end();
    });
  });
  const base = await listen(server);
  return { base, arrivals, close: () => shut(server) };
}
