import { z } from "zod";
import { JOB_EVENT_TYPES, type JobEventType } from "../../jobs/events.js";
import { optional, pathId, queryInt, withDefault } from "../../platform/validation.js";

export const EventTypeSchema = z.enum(JOB_EVENT_TYPES as readonly JobEventType[] as [JobEventType, ...JobEventType[]]);

export const DELIVERY_STATUSES = ["pending", "retrying", "succeeded", "failed"] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export const ENDPOINT_STATES = ["enabled", "paused", "disabled"] as const;
export type EndpointState = (typeof ENDPOINT_STATES)[number];

export const WorkspaceParams = z.object({ workspace_id: pathId("Workspace") });
export const EndpointParams = z.object({ workspace_id: pathId("Workspace"), endpoint_id: pathId("Webhook endpoint") });

export const CreateEndpointBody = z.object({
  // http(s) only; whether the address is public is checked once the workspace is known (service).
  url: z
    .url({ protocol: /^https?$/, error: "Input should be a valid http or https URL" })
    .max(2000)
    .refine((u) => {
      const parsed = URL.parse(u); // null when the format check above failed already
      return !parsed || (parsed.username === "" && parsed.password === "");
    }, "The URL should not contain credentials"),
  // Absent, null or empty: every event type.
  event_types: withDefault(z.array(EventTypeSchema).max(JOB_EVENT_TYPES.length), []).transform((v) => [...new Set(v)]),
  description: optional(z.string().trim().max(500)),
});
export type CreateEndpointInput = z.output<typeof CreateEndpointBody>;

export const UpdateEndpointBody = z.object({
  state: z.literal("enabled").describe("`enabled`: attempt deliveries again, with the failure count reset (lifts a pause or a disable)."),
});

export const DeliveriesQuery = z.object({
  limit: queryInt(1, 500).optional(),
  offset: queryInt(0, 1_000_000_000).optional(),
});

export const EndpointRecord = z.object({
  id: z.uuid(),
  workspace_id: z.uuid(),
  url: z.string(),
  description: z.string().nullable(),
  event_types: z.array(EventTypeSchema).describe("Empty: every event type."),
  created_at: z.string(),
  state: z
    .enum(ENDPOINT_STATES)
    .describe(
      "`enabled`: deliveries are attempted. `paused`: after failed attempts in a row, none is attempted before " +
        "`paused_until`. `disabled`: after a long run of failures, nothing is sent or recorded for it until an admin enables it.",
    ),
  consecutive_failures: z.number().int().describe("Failed attempts since the last success."),
  paused_until: z.string().nullable(),
  disabled_at: z.string().nullable(),
  disabled_reason: z.string().nullable(),
});
export type EndpointRecord = z.infer<typeof EndpointRecord>;

export const CreatedEndpoint = EndpointRecord.extend({
  secret: z.string().describe("The signing secret (`whsec_` + base64). Shown in this answer only."),
});
export const ListEndpointsResponse = z.object({ endpoints: z.array(EndpointRecord) });

export const DeliveryRecord = z.object({
  id: z.uuid(),
  message_id: z.string().describe("The `webhook-id` header of every attempt of this message."),
  event_type: EventTypeSchema,
  status: z.enum(DELIVERY_STATUSES),
  attempts: z.number().int(),
  last_status_code: z.number().int().nullable(),
  last_error: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
  last_attempt_at: z.string().nullable(),
  next_attempt_at: z.string().nullable(),
  delivered_at: z.string().nullable(),
});
export type DeliveryRecord = z.infer<typeof DeliveryRecord>;

export const ListDeliveriesResponse = z.object({
  endpoint_id: z.uuid(),
  total: z.number().int(),
  limit: z.number().int(),
  offset: z.number().int(),
  next_offset: z.number().int().nullable(),
  deliveries: z.array(DeliveryRecord),
});
