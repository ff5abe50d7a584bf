import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Progress } from "@modelcontextprotocol/sdk/types.js";
import { expect } from "vitest";

/**
 * The SDK's own client against a listening app, as a desktop or IDE agent connects: the
 * endpoint's URL and a credential in a header.
 */
export type Credential = { bearer: string } | { apiKey: string };

export interface Connected {
  client: Client;
  close: () => Promise<void>;
}

export function headersFor(credential: Credential | undefined): Record<string, string> {
  if (!credential) return {};
  return "bearer" in credential ? { Authorization: `Bearer ${credential.bearer}` } : { "X-API-Key": credential.apiKey };
}

export async function connect(baseUrl: string, credential: Credential | undefined): Promise<Connected> {
  const client = new Client({ name: "research-evidence-tests", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), {
    requestInit: { headers: headersFor(credential) },
  });
  await client.connect(transport);
  return { client, close: () => client.close() };
}

export interface ToolAnswer {
  isError: boolean;
  body: Record<string, unknown>;
  text: string;
}

export async function callTool(
  client: Client,
  name: string,
  args: Record<string, unknown>,
  options: { onprogress?: (progress: Progress) => void; timeout?: number } = {},
): Promise<ToolAnswer> {
  const result = await client.callTool({ name, arguments: args }, undefined, {
    ...(options.onprogress ? { onprogress: options.onprogress, resetTimeoutOnProgress: true } : {}),
    ...(options.timeout ? { timeout: options.timeout } : {}),
  });
  const content = result.content as { type: string; text: string }[];
  expect(content[0]?.type).toBe("text");
  const text = content[0]!.text;
  const body = result.structuredContent as Record<string, unknown>;
  // The text block carries the same answer for clients that do not read structured content.
  expect(JSON.parse(text)).toEqual(body);
  return { isError: result.isError === true, body, text };
}

/** A call that must succeed: its structured answer. */
export async function ok(client: Client, name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  const answer = await callTool(client, name, args);
  expect(answer.isError, `${name} ${JSON.stringify(args)} -> ${answer.text}`).toBe(false);
  return answer.body;
}

/** A call that must be refused: its status and body. */
export async function refused(client: Client, name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  const answer = await callTool(client, name, args);
  expect(answer.isError, `${name} ${JSON.stringify(args)} -> ${answer.text}`).toBe(true);
  return answer.body;
}
