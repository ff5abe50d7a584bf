import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHttpClient } from "../../src/intake/collection/collectors/http.js";
import { checkedLookup, judgeAddress, OutboundRefusedError, outboundFetch, refusalOf } from "../../src/platform/outbound.js";

describe("address policy", () => {
  // [address, allowed, range it is judged by]
  const table: [string, boolean, string][] = [
    ["8.8.8.8", true, "unicast"],
    ["93.184.216.34", true, "unicast"],
    ["2606:4700:4700::1111", true, "unicast"],
    ["127.0.0.1", false, "loopback"],
    ["127.255.255.254", false, "loopback"],
    ["0.0.0.0", false, "unspecified"],
    ["10.1.2.3", false, "private"],
    ["172.16.0.1", false, "private"],
    ["172.31.255.255", false, "private"],
    ["192.168.1.1", false, "private"],
    ["169.254.169.254", false, "linkLocal"],
    ["100.64.0.1", false, "carrierGradeNat"],
    ["224.0.0.1", false, "multicast"],
    ["255.255.255.255", false, "broadcast"],
    ["192.0.2.10", false, "reserved"],
    ["198.18.0.1", false, "reserved"],
    ["::1", false, "loopback"],
    ["::", false, "unspecified"],
    // IPv4-mapped, in both notations
    ["::ffff:127.0.0.1", false, "loopback"],
    ["::ffff:7f00:1", false, "loopback"],
    ["::ffff:a9fe:a9fe", false, "linkLocal"],
    ["::ffff:8.8.8.8", true, "unicast"],
    // SIIT (IPv4-translated)
    ["::ffff:0:7f00:1", false, "loopback"],
    // IPv4-compatible (deprecated)
    ["::127.0.0.1", false, "loopback"],
    ["::7f00:1", false, "loopback"],
    ["::a00:1", false, "private"],
    // NAT64, well-known and local-use prefixes
    ["64:ff9b::7f00:1", false, "loopback"],
    ["64:ff9b::10.0.0.1", false, "private"],
    ["64:ff9b:1::c0a8:101", false, "private"],
    ["64:ff9b::808:808", true, "unicast"],
    // 6to4
    ["2002:7f00:1::", false, "loopback"],
    ["2002:c0a8:101::1", false, "private"],
    ["2002:808:808::1", true, "unicast"],
    // Teredo hides its address: refused as such
    ["2001:0:4136:e378:8000:63bf:3fff:fdd2", false, "teredo"],
    ["fc00::1", false, "uniqueLocal"],
    ["fd12:3456:789a::1", false, "uniqueLocal"],
    ["fe80::1", false, "linkLocal"],
    ["fe80::1%eth0", false, "linkLocal"],
    ["fec0::1", false, "deprecatedSiteLocal"],
    ["ff02::1", false, "multicast"],
    ["2001:db8::1", false, "reserved"],
    ["[::ffff:127.0.0.1]", false, "loopback"],
    ["not-an-address", false, "invalid"],
  ];

  it.each(table)("%s → allowed %s (%s)", (address, allowed, range) => {
    const verdict = judgeAddress(address);
    expect(verdict.allowed).toBe(allowed);
    expect(verdict.range).toBe(range);
  });

  // Every spelling a URL may use for loopback is normalised by the URL parser, then judged.
  it.each([
    "http://127.0.0.1/",
    "http://[::1]/",
    "http://[::ffff:127.0.0.1]:8080/docs/",
    "http://[::ffff:7f00:1]/",
    "http://[0:0:0:0:0:ffff:127.0.0.1]/",
    "http://[::127.0.0.1]/",
    "http://[64:ff9b::127.0.0.1]/",
    "http://[2002:7f00:1::]/",
    "http://0.0.0.0/",
    "http://2130706433/",
    "http://0x7f.1/",
    "http://017700000001/",
    "http://127.1/",
    "http://169.254.169.254/latest/meta-data/",
    "http://[fe80::1]/",
    "http://[fd00::1]/",
  ])("refuses %s before connecting", (url) => {
    expect(refusalOf(new URL(url), {})).toBeInstanceOf(OutboundRefusedError);
  });

  it("refuses schemes other than http and https whatever the policy", () => {
    expect(refusalOf(new URL("file:///etc/passwd"), { allowPrivate: true })?.message).toMatch(/unsupported URL scheme/);
    expect(refusalOf(new URL("https://example.com/"), {})).toBeUndefined();
    expect(refusalOf(new URL("http://127.0.0.1:9/"), { trustedOrigins: ["http://127.0.0.1:9"] })).toBeUndefined();
  });

  it("resolves names once and refuses any that resolve to a non-public address", async () => {
    const result = await new Promise<{ err: NodeJS.ErrnoException | null; address: string }>((resolve) =>
      checkedLookup("localhost", {}, (err, address) => resolve({ err, address: String(address) })),
    );
    expect(result.err?.message).toMatch(/localhost resolves to .*(loopback).*, not a public address/);
    expect(result.address).toBe("");
  });
});

describe("outbound fetch", () => {
  const hits: string[] = [];
  let inside: Server;
  let front: Server;
  let insideUrl: string;
  let frontUrl: string;

  const listen = async (server: Server) => {
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  };

  beforeAll(async () => {
    // "inside" plays an internal service that must never be reached on a user's behalf.
    inside = createServer((req, res) => {
      hits.push(req.url ?? "");
      res.end("internal secret");
    });
    insideUrl = await listen(inside);
    const insidePort = new URL(insideUrl).port;
    // "front" is an origin the operator trusts, which redirects to private addresses.
    front = createServer((req, res) => {
      const targets: Record<string, string> = {
        "/to-mapped": `http://[::ffff:127.0.0.1]:${insidePort}/mapped`,
        "/to-localhost": `http://localhost:${insidePort}/by-name`,
        "/to-nat64": `http://[64:ff9b::7f00:1]:${insidePort}/nat64`,
        "/loop": "/loop",
      };
      const target = targets[req.url ?? ""];
      if (target) {
        res.writeHead(302, { location: target }).end();
        return;
      }
      res.end("front page");
    });
    frontUrl = await listen(front);
  });

  afterAll(async () => {
    await new Promise((resolve) => inside.close(resolve));
    await new Promise((resolve) => front.close(resolve));
  });

  it("fetches a trusted origin on a private address", async () => {
    const res = await outboundFetch(`${frontUrl}/`, {}, { trustedOrigins: [frontUrl] });
    expect(await res.text()).toBe("front page");
  });

  it.each(["/to-mapped", "/to-localhost", "/to-nat64"])(
    "refuses a redirect from a trusted origin to a private address (%s)",
    async (path) => {
      await expect(outboundFetch(`${frontUrl}${path}`, {}, { trustedOrigins: [frontUrl] })).rejects.toBeInstanceOf(OutboundRefusedError);
      expect(hits).toEqual([]);
    },
  );

  it("refuses a name that resolves to loopback at connection time, without connecting", async () => {
    const port = new URL(insideUrl).port;
    await expect(outboundFetch(`http://localhost:${port}/by-name`)).rejects.toThrow(/not a public address/);
    expect(hits).toEqual([]);
  });

  it("stops after the redirect limit", async () => {
    await expect(outboundFetch(`${frontUrl}/loop`, {}, { trustedOrigins: [frontUrl], maxRedirects: 3 })).rejects.toThrow(
      /more than 3 redirects/,
    );
  });

  it("does not follow redirects for methods other than GET and HEAD", async () => {
    const res = await outboundFetch(`${frontUrl}/to-mapped`, { method: "POST", body: "{}" }, { trustedOrigins: [frontUrl] });
    expect(res.status).toBe(302);
    expect(hits).toEqual([]);
  });

  it("the collectors' client refuses an IPv4-mapped loopback URL and never reaches the server", async () => {
    const http = createHttpClient({ timeoutMs: 2000, retries: 2, requestsPerSecond: 100, maxRetryAfterMs: 0, allowPrivateUrls: false });
    const port = new URL(insideUrl).port;
    for (const url of [`http://[::ffff:127.0.0.1]:${port}/docs/`, `http://[::ffff:7f00:1]:${port}/`, `http://localhost:${port}/`]) {
      await expect(http.getText(url)).rejects.toMatchObject({ kind: "permanent", message: /not a public address/ });
    }
    expect(hits).toEqual([]);
  });
});
