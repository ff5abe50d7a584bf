import type { Headers, Response } from "undici";
import { parseRetryAfterMs } from "../../../platform/http/retry-after.js";
import { isOutboundRefusal, type OutboundPolicy, OutboundRefusedError, outboundFetch, refusalOf } from "../../../platform/outbound.js";

/**
 * The collectors' HTTP client: one per collector run. It spaces requests (a per-run
 * rate limit), times each one out, retries transient failures with exponential
 * backoff and honours `Retry-After` (and GitHub's `x-ratelimit-reset`) on rate-limit
 * answers. What it cannot recover from is thrown as an `UpstreamError` whose `kind`
 * tells the runner whether a later job attempt may succeed (`transient`) or not.
 */
export type UpstreamFailureKind = "transient" | "permanent";

/**
 * What went wrong, as coverage reports it: the upstream `refused` (answered an error, or its address
 * may not be fetched), was `unreachable` (no such name, connection refused or reset, no route),
 * `timed_out`, kept us `rate_limited`, or was `unavailable` (5xx, 408).
 */
export type UpstreamProblem = "refused" | "unreachable" | "timed_out" | "rate_limited" | "unavailable";

export class UpstreamError extends Error {
  override name = "UpstreamError";
  readonly problem: UpstreamProblem;
  constructor(
    message: string,
    readonly kind: UpstreamFailureKind,
    readonly status?: number,
    readonly retryAfterMs?: number,
    problem?: UpstreamProblem,
  ) {
    super(message);
    this.problem =
      problem ?? (status === 429 ? "rate_limited" : status !== undefined && (status >= 500 || status === 408) ? "unavailable" : "refused");
  }
}

/** A fetch failure (no HTTP answer) as an UpstreamError that says what happened. */
function networkFailure(err: Error, url: string, timeoutMs: number): UpstreamError {
  if (err.name === "TimeoutError")
    return new UpstreamError(`no answer from ${new URL(url).host} within ${timeoutMs} ms`, "transient", undefined, undefined, "timed_out");
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  const code = cause?.code ?? "";
  const host = new URL(url).host;
  const what =
    code === "ENOTFOUND" || code === "EAI_AGAIN" || code === "EAI_NODATA"
      ? `the name ${new URL(url).hostname} could not be resolved (${code})`
      : code === "ECONNREFUSED"
        ? `${host} refused the connection (${code})`
        : code
          ? `the connection to ${host} failed (${code})`
          : `the request to ${host} failed: ${cause?.message ?? err.message}`;
  // A name that does not exist will not exist on the next try either.
  const kind = code === "ENOTFOUND" || code === "EAI_NODATA" ? "permanent" : "transient";
  return new UpstreamError(`unreachable: ${what}`, kind, undefined, undefined, "unreachable");
}

export interface HttpClientOptions {
  timeoutMs: number;
  /** Retries after the first attempt, for transient failures. */
  retries: number;
  requestsPerSecond: number;
  /** A `Retry-After` longer than this is not waited out inside the run. */
  maxRetryAfterMs: number;
  /** First backoff step; doubled per retry, with jitter. */
  baseDelayMs?: number;
  headers?: Record<string, string>;
  /** When false, URLs that resolve to loopback, private or link-local addresses are refused. */
  allowPrivateUrls?: boolean;
  /** Aborts every call in flight (the job was cancelled). */
  signal?: AbortSignal;
  /** Largest answer body read (default 5 MiB); a longer one is refused as permanent. */
  maxBytes?: number;
}

export interface HttpAnswer<T> {
  body: T;
  status: number;
  headers: Headers;
  url: string;
}

export interface HttpClient {
  getJson<T>(url: string, headers?: Record<string, string>): Promise<HttpAnswer<T>>;
  getText(url: string, headers?: Record<string, string>): Promise<HttpAnswer<string>>;
  /** Requests sent so far (attempts included). */
  readonly requests: number;
}

const USER_AGENT = "research-evidence-service/1.0 (+collector)";
const MAX_REDIRECTS = 5;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Waits `ms`, or less when `signal` aborts first (a cancelled job does not wait out a backoff). */
function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  if (!signal) return sleep(ms);
  return new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}

/** How long a rate-limit answer asks us to wait (Retry-After, or GitHub's reset header). */
function rateLimitWait(res: Response): number | undefined {
  const retryAfter = parseRetryAfterMs(res.headers.get("retry-after"));
  if (retryAfter !== undefined) return retryAfter;
  if (res.headers.get("x-ratelimit-remaining") === "0") {
    const reset = Number(res.headers.get("x-ratelimit-reset"));
    if (Number.isFinite(reset) && reset > 0) return Math.max(0, reset * 1000 - Date.now());
  }
  return undefined;
}

function isRateLimited(res: Response): boolean {
  if (res.status === 429) return true;
  // GitHub answers an exhausted rate limit with 403 and x-ratelimit-remaining: 0.
  return res.status === 403 && res.headers.get("x-ratelimit-remaining") === "0";
}

const isTransientStatus = (status: number) => status === 408 || status === 425 || status === 429 || status >= 500;

/** The body as text, refusing (without reading on) one longer than `maxBytes`. */
async function readBody(res: Response, maxBytes: number): Promise<string> {
  const declared = Number(res.headers.get("content-length") ?? 0);
  if (declared > maxBytes) {
    await res.body?.cancel();
    throw new UpstreamError(`the answer is larger than ${maxBytes} bytes`, "permanent", res.status);
  }
  if (!res.body) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of res.body) {
    size += chunk.byteLength;
    if (size > maxBytes) {
      await res.body.cancel().catch(() => undefined);
      throw new UpstreamError(`the answer is larger than ${maxBytes} bytes`, "permanent", res.status);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

export function createHttpClient(options: HttpClientOptions): HttpClient {
  const minIntervalMs = 1000 / options.requestsPerSecond;
  const baseDelayMs = options.baseDelayMs ?? 500;
  const maxBytes = options.maxBytes ?? 5 * 1024 * 1024;
  let nextSlot = 0;
  let requests = 0;

  /** Reserves the next request slot so concurrent callers stay spaced. */
  async function takeSlot(): Promise<void> {
    const now = Date.now();
    const at = Math.max(now, nextSlot);
    nextSlot = at + minIntervalMs;
    if (at > now) await sleep(at - now);
  }

  const policy: OutboundPolicy = { allowPrivate: options.allowPrivateUrls === true, maxRedirects: MAX_REDIRECTS };

  const refused = (url: string, err: Error) => new UpstreamError(`refused to fetch ${url}: ${err.message}`, "permanent");

  async function fetchOnce(url: string, headers: Record<string, string>): Promise<Response> {
    // Refused before any connection (scheme, address literal): not counted as a request.
    const refusal = refusalOf(new URL(url), policy);
    if (refusal) throw refused(url, refusal);
    await takeSlot();
    requests++;
    try {
      return await outboundFetch(
        url,
        {
          headers: { "user-agent": USER_AGENT, ...options.headers, ...headers },
          signal: options.signal
            ? AbortSignal.any([options.signal, AbortSignal.timeout(options.timeoutMs)])
            : AbortSignal.timeout(options.timeoutMs),
        },
        policy,
      );
    } catch (err) {
      if (err instanceof OutboundRefusedError || isOutboundRefusal(err)) {
        throw refused(url, err as Error);
      }
      throw err;
    }
  }

  async function request(url: string, headers: Record<string, string>): Promise<Response> {
    let lastError: UpstreamError | undefined;
    for (let attempt = 0; attempt <= options.retries; attempt++) {
      // A cancelled job's call is not retried: the abort is the caller's, not the upstream's.
      if (options.signal?.aborted) throw options.signal.reason;
      let res: Response;
      try {
        res = await fetchOnce(url, headers);
      } catch (err) {
        if (err instanceof UpstreamError) throw err;
        if (options.signal?.aborted) throw options.signal.reason;
        lastError = networkFailure(err as Error, url, options.timeoutMs);
        if (lastError.kind === "permanent") throw lastError;
        if (attempt < options.retries) await pause(backoff(attempt), options.signal);
        continue;
      }
      if (res.ok) return res;
      await res.body?.cancel();
      const limited = isRateLimited(res);
      if (!limited && !isTransientStatus(res.status)) {
        throw new UpstreamError(`upstream answered HTTP ${res.status}`, "permanent", res.status);
      }
      const wait = limited || res.status === 503 ? rateLimitWait(res) : undefined;
      lastError = new UpstreamError(
        limited ? `upstream rate limit (HTTP ${res.status})` : `upstream answered HTTP ${res.status}`,
        "transient",
        res.status,
        wait,
        limited ? "rate_limited" : undefined,
      );
      if (wait !== undefined && wait > options.maxRetryAfterMs) throw lastError;
      if (attempt < options.retries) await pause(wait ?? backoff(attempt), options.signal);
    }
    throw lastError ?? new UpstreamError("request failed", "transient");
  }

  function backoff(attempt: number): number {
    const step = baseDelayMs * 2 ** attempt;
    return Math.round(step / 2 + Math.random() * (step / 2));
  }

  return {
    get requests() {
      return requests;
    },
    async getJson<T>(url: string, headers: Record<string, string> = {}) {
      const res = await request(url, { accept: "application/json", ...headers });
      const text = await readBody(res, maxBytes);
      try {
        return { body: JSON.parse(text) as T, status: res.status, headers: res.headers, url: res.url || url };
      } catch {
        throw new UpstreamError(`upstream answered with invalid JSON from ${new URL(url).host}`, "permanent", res.status);
      }
    },
    async getText(url: string, headers: Record<string, string> = {}) {
      const res = await request(url, headers);
      return { body: await readBody(res, maxBytes), status: res.status, headers: res.headers, url: res.url || url };
    },
  };
}
