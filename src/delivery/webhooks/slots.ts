import { randomUUID } from "node:crypto";
import { ErrorCode } from "bullmq";
import type { Config } from "../../platform/config.js";
import type { AppDeps } from "../../platform/deps.js";
import type { Redis } from "../../platform/redis.js";

/**
 * Delivery slots: how many attempts may be in flight at once to one endpoint
 * (WEBHOOK_ENDPOINT_CONCURRENCY) and for one workspace (WEBHOOK_WORKSPACE_CONCURRENCY), across
 * every worker process; 0 lifts a limit. BullMQ (open source) has no groups, so the slots are
 * leases in Redis, one sorted set per workspace:
 *
 * - `…:leases`: `endpointId/leaseId` scored by the lease's expiry. A lease is taken before an
 *   attempt and released after it; one whose worker died lapses after the attempt's longest
 *   possible run (WEBHOOK_TIMEOUT_MS plus a margin) and is purged by the next script.
 * - `…:waiting`: `endpointId/jobId` of the deliveries that found no slot, scored by when they
 *   parked. A release wakes the oldest ones that fit (their endpoint has room), so a parked
 *   delivery does not poll; each also has a fallback time in case no release comes.
 *
 * Both keys carry the workspace id as a hash tag, so on a Redis Cluster one script touches one
 * slot. Each script reads the time from Redis, so workers' clocks do not matter.
 */
type Deps = Pick<AppDeps, "redis" | "config" | "queues" | "logger">;
export type SlotConfig = Pick<
  Config,
  "REDIS_PREFIX" | "WEBHOOK_TIMEOUT_MS" | "WEBHOOK_ENDPOINT_CONCURRENCY" | "WEBHOOK_WORKSPACE_CONCURRENCY"
>;

/** One delivery's claim: whose slots it needs, and its queue job (to wake it when parked). */
export interface SlotRequest {
  workspaceId: string;
  endpointId: string;
  jobId: string;
}

/** A slot held by an attempt. */
export interface HeldSlot extends SlotRequest {
  leaseId: string;
}

/** How long past the attempt's timeout a lease outlives a worker that died holding it. */
const LEASE_MARGIN_MS = 5000;
/** The waiting entries a release looks at, and the most deliveries it wakes. */
const WAKE_SCAN = 100;
const WAKE_MAX = 16;
/** Waiting entries of a workspace nobody touched for a day are dropped with their key. */
const WAITING_TTL_MS = 24 * 3600 * 1000;

/** The longest an attempt holds its lease. */
export const leaseMs = (config: Pick<Config, "WEBHOOK_TIMEOUT_MS">) => config.WEBHOOK_TIMEOUT_MS + LEASE_MARGIN_MS;

/** True when neither limit applies: no lease is taken. */
export const slotsUnlimited = (config: SlotConfig) =>
  config.WEBHOOK_ENDPOINT_CONCURRENCY === 0 && config.WEBHOOK_WORKSPACE_CONCURRENCY === 0;

function keysOf(config: SlotConfig, workspaceId: string): [string, string] {
  const tag = `${config.REDIS_PREFIX}:webhook-slots:{${workspaceId}}`;
  return [`${tag}:leases`, `${tag}:waiting`];
}

// KEYS[1] leases, KEYS[2] waiting. Shared head: the server's time in ms, expired leases purged, and
// `room(endpoint)`: whether one more attempt to that endpoint fits under both limits.
const HEAD = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local held = redis.call('ZRANGE', KEYS[1], 0, -1)
local total, per = #held, {}
for _, m in ipairs(held) do
  local e = string.match(m, '^([^/]+)/')
  per[e] = (per[e] or 0) + 1
end
local function room(endpoint, wsCap, epCap)
  return (wsCap == 0 or total < wsCap) and (epCap == 0 or (per[endpoint] or 0) < epCap)
end
`;

// ARGV: endpoint, lease id, job id, workspace cap, endpoint cap, lease ms. 1 when taken.
const TAKE = `${HEAD}
if not room(ARGV[1], tonumber(ARGV[4]), tonumber(ARGV[5])) then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[6]), ARGV[1] .. '/' .. ARGV[2])
redis.call('PEXPIRE', KEYS[1], 2 * tonumber(ARGV[6]))
redis.call('ZREM', KEYS[2], ARGV[1] .. '/' .. ARGV[3])
return 1`;

// ARGV: endpoint, job id, workspace cap, endpoint cap. 1 when a slot is free after all (not parked).
const PARK = `${HEAD}
if room(ARGV[1], tonumber(ARGV[3]), tonumber(ARGV[4])) then return 1 end
redis.call('ZADD', KEYS[2], now, ARGV[1] .. '/' .. ARGV[2])
redis.call('PEXPIRE', KEYS[2], ${WAITING_TTL_MS})
return 0`;

// ARGV: endpoint, lease id, workspace cap, endpoint cap. The job ids to wake, oldest first.
const RELEASE = `
redis.call('ZREM', KEYS[1], ARGV[1] .. '/' .. ARGV[2])
${HEAD}
local wsCap, epCap, woken = tonumber(ARGV[3]), tonumber(ARGV[4]), {}
for _, m in ipairs(redis.call('ZRANGE', KEYS[2], 0, ${WAKE_SCAN - 1})) do
  if #woken >= ${WAKE_MAX} or (wsCap > 0 and total >= wsCap) then break end
  local e, job = string.match(m, '^([^/]+)/(.+)$')
  if room(e, wsCap, epCap) then
    per[e] = (per[e] or 0) + 1
    total = total + 1
    redis.call('ZREM', KEYS[2], m)
    woken[#woken + 1] = job
  end
end
return woken`;

interface SlotCommands {
  webhookSlotTake(leases: string, waiting: string, ...args: (string | number)[]): Promise<number>;
  webhookSlotPark(leases: string, waiting: string, ...args: (string | number)[]): Promise<number>;
  webhookSlotRelease(leases: string, waiting: string, ...args: (string | number)[]): Promise<string[]>;
}

const defined = new WeakSet<Redis>();

/** The connection with the slot scripts defined on it (once; ioredis loads them by SHA). */
function commands(redis: Redis): SlotCommands {
  if (!defined.has(redis)) {
    redis.defineCommand("webhookSlotTake", { numberOfKeys: 2, lua: TAKE });
    redis.defineCommand("webhookSlotPark", { numberOfKeys: 2, lua: PARK });
    redis.defineCommand("webhookSlotRelease", { numberOfKeys: 2, lua: RELEASE });
    defined.add(redis);
  }
  return redis as unknown as SlotCommands;
}

const caps = (config: SlotConfig) => [config.WEBHOOK_WORKSPACE_CONCURRENCY, config.WEBHOOK_ENDPOINT_CONCURRENCY] as const;

/** Takes a slot for one attempt; undefined when the endpoint or the workspace has none free. */
export async function takeSlot(deps: Pick<Deps, "redis" | "config">, request: SlotRequest): Promise<HeldSlot | undefined> {
  const leaseId = randomUUID();
  const [leases, waiting] = keysOf(deps.config, request.workspaceId);
  const taken = await commands(deps.redis).webhookSlotTake(
    leases,
    waiting,
    request.endpointId,
    leaseId,
    request.jobId,
    ...caps(deps.config),
    leaseMs(deps.config),
  );
  return taken === 1 ? { ...request, leaseId } : undefined;
}

/**
 * Parks a delivery that found no slot, once its job was moved to delayed, so the next release
 * wakes it. True when a slot was freed meanwhile: nothing is parked and the caller wakes the job itself.
 */
export async function parkForSlot(deps: Pick<Deps, "redis" | "config">, request: SlotRequest): Promise<boolean> {
  const [leases, waiting] = keysOf(deps.config, request.workspaceId);
  const free = await commands(deps.redis).webhookSlotPark(leases, waiting, request.endpointId, request.jobId, ...caps(deps.config));
  return free === 1;
}

/**
 * Releases an attempt's slot and wakes the parked deliveries that now fit (their delayed jobs are
 * promoted). A release that fails is logged: the lease lapses on its own.
 */
export async function releaseSlot(deps: Deps, slot: HeldSlot): Promise<void> {
  const [leases, waiting] = keysOf(deps.config, slot.workspaceId);
  try {
    const woken = await commands(deps.redis).webhookSlotRelease(leases, waiting, slot.endpointId, slot.leaseId, ...caps(deps.config));
    await Promise.all(woken.map((jobId) => wakeJob(deps, jobId)));
  } catch (err) {
    deps.logger.warn({ err, endpointId: slot.endpointId }, "webhook slot not released; its lease lapses on its own");
  }
}

/** Moves a delayed delivery job to waiting now. A job no longer delayed (it ran meanwhile, or is gone) is left as it is. */
export async function wakeJob(deps: Pick<Deps, "queues">, jobId: string): Promise<void> {
  const job = await deps.queues.get("webhooks").getJob(jobId);
  await job?.promote().catch((err: Error & { code?: number }) => {
    if (err.code !== ErrorCode.JobNotInState && err.code !== ErrorCode.JobNotExist) throw err;
  });
}
