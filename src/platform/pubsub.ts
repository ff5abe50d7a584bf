import { AppError } from "./errors.js";
import type { Logger } from "./logger.js";
import { createRedis, isCluster, type Redis } from "./redis.js";

/**
 * One Redis subscriber connection per process, multiplexing every channel the process
 * listens to. A channel is SUBSCRIBEd when its first listener arrives and UNSUBSCRIBEd
 * when its last listener leaves, so a request that streams events costs a map entry,
 * not a connection. The connection is opened on first use (worker processes that only
 * publish never open it). Publishing goes through the process's producer connection
 * (`publish` in redis.ts). On a Redis Cluster channels are sharded (SSUBSCRIBE /
 * SPUBLISH): a message travels only within the shard that owns its channel's slot, and
 * the process holds one subscriber connection per master instead of one in all.
 */
export type Listener = (message: string) => void;
export type Unsubscribe = () => Promise<void>;

export class PubSub {
  private connection: Redis | undefined;
  private readonly channels = new Map<string, { listeners: Set<Listener>; ready: Promise<void> }>();

  constructor(
    private readonly redisUrl: string,
    private readonly name: string,
    private readonly logger?: Logger,
    private readonly subscribeTimeoutMs = 3000,
  ) {}

  private subscriber(): Redis {
    if (!this.connection) {
      const connection = createRedis(this.redisUrl, "subscriber", `${this.name}-sub`, this.logger);
      const deliver = (channel: string, message: string) => {
        const entry = this.channels.get(channel);
        if (!entry) return;
        for (const listener of [...entry.listeners]) listener(message);
      };
      connection.on(isCluster(connection) ? "smessage" : "message", deliver);
      this.connection = connection;
    }
    return this.connection;
  }

  /** Number of channels this process is subscribed to (for tests and metrics). */
  get channelCount(): number {
    return this.channels.size;
  }

  /**
   * Adds a listener and resolves once Redis has confirmed the subscription, so that a
   * caller may publish-after-subscribe without losing messages. Throws 503 when Redis
   * does not confirm in time.
   */
  async subscribe(channel: string, listener: Listener): Promise<Unsubscribe> {
    let entry = this.channels.get(channel);
    if (entry) {
      entry.listeners.add(listener);
    } else {
      const listeners = new Set<Listener>([listener]);
      const connection = this.subscriber();
      const ready = (isCluster(connection) ? connection.ssubscribe(channel) : connection.subscribe(channel)).then(() => undefined);
      entry = { listeners, ready };
      this.channels.set(channel, entry);
    }
    const current = entry;
    let unsubscribed = false;
    const unsubscribe: Unsubscribe = async () => {
      if (unsubscribed) return;
      unsubscribed = true;
      current.listeners.delete(listener);
      if (current.listeners.size === 0 && this.channels.get(channel) === current) {
        this.channels.delete(channel);
        // Commands on one connection run in order, so a later SUBSCRIBE of the same
        // channel is applied after this UNSUBSCRIBE. Not awaited: while Redis is down the
        // command waits in the offline queue, and a caller (a request answering 503)
        // must not wait with it.
        const connection = this.connection;
        if (connection) {
          void (isCluster(connection) ? connection.sunsubscribe(channel) : connection.unsubscribe(channel)).catch(() => undefined);
        }
      }
    };
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        current.ready,
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error("subscribe timed out")), this.subscribeTimeoutMs);
        }),
      ]);
    } catch (err) {
      await unsubscribe();
      throw new AppError("service_unavailable", "The event relay is unavailable; try again shortly.", {
        cause: err,
        headers: { "Retry-After": "5" },
      });
    } finally {
      clearTimeout(timer);
    }
    return unsubscribe;
  }

  async close(): Promise<void> {
    this.channels.clear();
    if (this.connection) {
      const connection = this.connection;
      this.connection = undefined;
      await connection.quit().catch(() => connection.disconnect());
    }
  }
}
