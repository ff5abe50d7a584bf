import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { isIP, type LookupFunction } from "node:net";
import ipaddr from "ipaddr.js";
import { Agent, type Dispatcher, fetch, type RequestInit, type Response } from "undici";

/**
 * Every request the service sends to an address it did not choose itself goes through here:
 * collectors, the meeting-notes provider, the search provider, embeddings, the model endpoint.
 *
 * The decision is made on the address actually connected to, after DNS resolution and on every
 * redirect hop: the connection's own `lookup` resolves the name once, checks every address it
 * got and hands only checked addresses to the socket, so a name cannot resolve to a public
 * address for the check and to a private one for the connection (DNS rebinding). IPv6 forms that
 * carry an IPv4 address (IPv4-mapped, IPv4-compatible, NAT64, 6to4, SIIT) are judged by the IPv4
 * address inside; Teredo, whose inner address is obscured, is refused.
 *
 * Two policies: `public` (user-influenced URLs: an entity's web pages) allows global unicast
 * addresses only; a trusted origin (an endpoint the operator configured) may be on a private
 * network, but a redirect away from it is judged by the public policy again.
 */

export class OutboundRefusedError extends Error {
  override name = "OutboundRefusedError";
  constructor(
    message: string,
    readonly url: string,
  ) {
    super(message);
  }
}

export interface AddressVerdict {
  allowed: boolean;
  /** The range the address (or the IPv4 address inside it) falls in, e.g. `loopback`, `private`, `unicast`. */
  range: string;
  /** The IPv4 address an IPv6 form carries, when it carries one. */
  embeddedIPv4?: string;
}

/** IPv6 ranges whose low 32 bits are an IPv4 address that the packet really goes to. */
const EMBEDDING_LOW_32 = new Set(["ipv4Mapped", "rfc6145", "rfc6052"]);

function ipv4Verdict(address: ipaddr.IPv4, embedded?: string): AddressVerdict {
  const range = address.range();
  return { allowed: range === "unicast", range, ...(embedded ? { embeddedIPv4: embedded } : {}) };
}

/** Whether the service may connect to `ip` on a user's behalf (public policy). */
export function judgeAddress(ip: string): AddressVerdict {
  const literal = ip.replace(/^\[|\]$/g, "").replace(/%.*$/, "");
  if (!ipaddr.isValid(literal) || isIP(literal) === 0) return { allowed: false, range: "invalid" };
  const parsed = ipaddr.parse(literal);
  if (parsed.kind() === "ipv4") return ipv4Verdict(parsed as ipaddr.IPv4);

  const v6 = parsed as ipaddr.IPv6;
  const range = v6.range();
  const word = (i: number) => v6.parts[i] ?? 0;
  const ipv4Of = (hi: number, lo: number) => new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
  const low32 = () => ipv4Of(word(6), word(7));
  if (EMBEDDING_LOW_32.has(range)) {
    const inner = low32();
    return ipv4Verdict(inner, inner.toString());
  }
  // IPv4-compatible (::a.b.c.d, deprecated but still routed by some stacks); :: and ::1 are ranges of their own.
  if (range === "reserved" || range === "unicast") {
    if ([0, 1, 2, 3, 4, 5].every((i) => word(i) === 0) && (word(6) !== 0 || word(7) > 1)) {
      const inner = low32();
      return ipv4Verdict(inner, inner.toString());
    }
  }
  if (range === "6to4") {
    const inner = ipv4Of(word(1), word(2));
    return ipv4Verdict(inner, inner.toString());
  }
  return { allowed: range === "unicast", range };
}

const describe = (ip: string, verdict: AddressVerdict) =>
  verdict.embeddedIPv4 ? `${ip} (carrying ${verdict.embeddedIPv4}, ${verdict.range})` : `${ip} (${verdict.range})`;

/**
 * The connection's resolver under the public policy: resolves once, refuses the name when any of
 * its addresses is not public, and returns exactly the addresses it checked.
 */
export const checkedLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
    if (err) return callback(err, "", 0);
    const refused = addresses.find((a) => !judgeAddress(a.address).allowed);
    if (addresses.length === 0 || refused) {
      const detail = refused ? describe(refused.address, judgeAddress(refused.address)) : "no address";
      const error = Object.assign(new Error(`${hostname} resolves to ${detail}, not a public address`), {
        code: "EADDRREFUSED",
      });
      return callback(error, "", 0);
    }
    if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
    const first = addresses[0] as LookupAddress;
    callback(null, first.address, first.family);
  });
};

let publicAgent: Agent | undefined;
let trustedAgent: Agent | undefined;
/** Connections under the public policy: resolved and checked by `checkedLookup`. */
const publicDispatcher = () => {
  publicAgent ??= new Agent({ connect: { lookup: checkedLookup } });
  return publicAgent;
};
const trustedDispatcher = () => {
  trustedAgent ??= new Agent();
  return trustedAgent;
};

export interface OutboundPolicy {
  /** Origins the operator configured (e.g. `http://127.0.0.1:8080`): any address is allowed for them. */
  trustedOrigins?: readonly string[];
  /** Allow every address (operators who collect from their own network; tests). */
  allowPrivate?: boolean;
  /** Redirects followed for GET and HEAD (each hop checked again); default 5. Other methods never follow. */
  maxRedirects?: number;
}

/** The policy for an endpoint the operator configured: its own origin may be on a private network. */
export const trustedEndpoint = (baseUrl: string, maxRedirects = 5): OutboundPolicy => ({
  trustedOrigins: [new URL(baseUrl).origin],
  maxRedirects,
});

export type OutboundInit = Omit<RequestInit, "redirect" | "dispatcher">;

/** The error for a URL the public policy refuses before any connection, or undefined when it may go ahead. */
export function refusalOf(url: URL, policy: OutboundPolicy): OutboundRefusedError | undefined {
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return new OutboundRefusedError(`unsupported URL scheme ${url.protocol}`, url.href);
  }
  if (policy.allowPrivate || policy.trustedOrigins?.includes(url.origin)) return undefined;
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (isIP(host) === 0) return undefined; // a name: judged on its addresses when connecting
  const verdict = judgeAddress(host);
  return verdict.allowed ? undefined : new OutboundRefusedError(`${describe(host, verdict)} is not a public address`, url.href);
}

function dispatcherFor(url: URL, policy: OutboundPolicy): Dispatcher {
  return policy.allowPrivate || policy.trustedOrigins?.includes(url.origin) ? trustedDispatcher() : publicDispatcher();
}

/** True when a fetch failed because the address policy refused the connection. */
export function isOutboundRefusal(err: unknown): boolean {
  if (err instanceof OutboundRefusedError) return true;
  const cause = (err as { cause?: { code?: string } } | undefined)?.cause;
  return cause?.code === "EADDRREFUSED";
}

/**
 * `fetch` under an address policy, following redirects itself so that every hop is checked.
 * Throws `OutboundRefusedError` for a refused address (literal or resolved), like fetch's own
 * TypeError for network failures otherwise.
 */
export async function outboundFetch(input: string | URL, init: OutboundInit = {}, policy: OutboundPolicy = {}): Promise<Response> {
  const method = (init.method ?? "GET").toUpperCase();
  const follow = method === "GET" || method === "HEAD" ? (policy.maxRedirects ?? 5) : 0;
  let url = new URL(input);
  for (let hop = 0; ; hop++) {
    const refusal = refusalOf(url, policy);
    if (refusal) throw refusal;
    let res: Response;
    try {
      res = await fetch(url, { ...init, redirect: "manual", dispatcher: dispatcherFor(url, policy) });
    } catch (err) {
      if (isOutboundRefusal(err)) throw new OutboundRefusedError((err as { cause: Error }).cause.message, url.href);
      throw err;
    }
    const location = res.status >= 300 && res.status < 400 ? res.headers.get("location") : null;
    if (!location || follow === 0) return res;
    await res.body?.cancel();
    if (hop >= follow) throw new OutboundRefusedError(`more than ${follow} redirects from ${new URL(input).href}`, url.href);
    url = new URL(location, url);
  }
}
