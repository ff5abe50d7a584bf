import { createHash, createHmac, randomBytes } from "node:crypto";
import { eventType, type JobEvent } from "../../jobs/events.js";

/**
 * Standard Webhooks (https://www.standardwebhooks.com/): the secret is `whsec_` + base64 of
 * random bytes; each attempt is signed as `v1,` + base64(HMAC-SHA256(secret bytes,
 * `${webhook-id}.${webhook-timestamp}.${body}`)), the timestamp in unix seconds.
 */
const SECRET_PREFIX = "whsec_";

/** A new signing secret: `whsec_` + base64 of 32 random bytes (the standard asks for 24 to 64). */
export const generateSecret = (): string => `${SECRET_PREFIX}${randomBytes(32).toString("base64")}`;

export function signatureOf(secret: string, messageId: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, "base64");
  return `v1,${createHmac("sha256", key).update(`${messageId}.${timestampSeconds}.${body}`).digest("base64")}`;
}

/** The request headers of one attempt. */
export function signedHeaders(secret: string, messageId: string, body: string, now = new Date()): Record<string, string> {
  const timestamp = Math.floor(now.getTime() / 1000);
  return {
    "webhook-id": messageId,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": signatureOf(secret, messageId, timestamp, body),
  };
}

/**
 * The message id of an event: stable for (kind, job id, state), so the same event recorded
 * twice is the same message, and a receiver can deduplicate attempts on `webhook-id`.
 */
export function messageIdOf(event: Pick<JobEvent, "kind" | "id" | "status">): string {
  const digest = createHash("sha256").update(`${event.kind}\u0000${event.id}\u0000${event.status}`).digest("hex");
  return `msg_${digest.slice(0, 32)}`;
}

/** The JSON body of an event's message: `{type, timestamp, data}`. */
export function messageBody(event: JobEvent): string {
  const { id: _id, kind: _kind, status: _status, workspace_id: _ws, ...facts } = event.data;
  return JSON.stringify({
    type: eventType(event),
    timestamp: event.occurredAt.toISOString(),
    data: { id: event.id, kind: event.kind, status: event.status, workspace_id: event.workspaceId, ...facts },
  });
}
