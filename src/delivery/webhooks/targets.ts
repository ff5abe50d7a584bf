import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import type { Config } from "../../platform/config.js";
import { ValidationFailed } from "../../platform/errors.js";
import { judgeAddress, type OutboundPolicy, refusalOf } from "../../platform/outbound.js";

/**
 * Which addresses a webhook may be sent to: public addresses only, unless the operator set
 * WEBHOOK_ALLOW_PRIVATE_URLS. Checked at registration (a literal address, or a name that
 * resolves at once) and again on every attempt by `outboundFetch`, on the address connected to.
 */
export const deliveryPolicy = (config: Pick<Config, "WEBHOOK_ALLOW_PRIVATE_URLS">): OutboundPolicy => ({
  allowPrivate: config.WEBHOOK_ALLOW_PRIVATE_URLS,
  maxRedirects: 0,
});

const RESOLVE_TIMEOUT_MS = 2000;

/** Resolves a name within a short time; undefined when it does not (delivery judges it later). */
async function resolveQuickly(hostname: string): Promise<{ address: string }[] | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), RESOLVE_TIMEOUT_MS);
  });
  try {
    return await Promise.race([lookup(hostname, { all: true }).catch(() => undefined), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Refuses (422 on `body.url`) a URL whose address is not public under the deployment's policy. */
export async function assertDeliverable(config: Pick<Config, "WEBHOOK_ALLOW_PRIVATE_URLS">, rawUrl: string): Promise<void> {
  const url = new URL(rawUrl);
  const policy = deliveryPolicy(config);
  const refuse = (why: string) =>
    new ValidationFailed([{ loc: ["body", "url"], msg: `The URL is not allowed: ${why}`, type: "value_error" }]);
  const refusal = refusalOf(url, policy);
  if (refusal) throw refuse(refusal.message);
  if (policy.allowPrivate) return;
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (isIP(host) !== 0) return; // a literal address: refusalOf judged it
  const addresses = await resolveQuickly(host);
  const blocked = addresses?.find((a) => !judgeAddress(a.address).allowed);
  if (blocked) throw refuse(`${host} resolves to ${blocked.address} (${judgeAddress(blocked.address).range}), not a public address`);
}
