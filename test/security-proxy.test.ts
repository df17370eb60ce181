import { describe, expect, it } from "vitest";
import { expectError, serveHttp, startBackend } from "./_helpers.ts";
import { clientKey, resolveClientAddress, toTrustProxy } from "../src/http/trust-proxy.ts";

const WINDOW = { windowSeconds: 60 };

async function verifyFrom(url: string, key: string, forwardedFor: string) {
  const res = await fetch(`${url}/api/v1/auth/verify-email`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-service-key": key, "x-forwarded-for": forwardedFor },
    body: JSON.stringify({ token: "evt_unknown" }),
  });
  await res.arrayBuffer();
  return res.status;
}

describe("trustProxy takes the rightmost untrusted address (review item 3)", () => {
  it("behind one proxy, a client prepending forged addresses to x-forwarded-for is still counted as itself (real HTTP)", async () => {
    const t = await startBackend({ rateLimit: { ...WINDOW, perIp: 2, perEmail: 100 }, trustProxy: true });
    const { url } = await serveHttp(t.backend);
    // The proxy appends the address it saw (198.51.100.7); the client controls everything left of it.
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push(await verifyFrom(url, t.app.publishableKey, `10.9.${i}.1, 198.51.100.7`));
    expect(statuses).toEqual([400, 400, 429]);
    expect(await verifyFrom(url, t.app.publishableKey, "198.51.100.8")).toBe(400);
  });

  it("with the proxies named by CIDR, the first address not in the list counts, however many proxies appended theirs", async () => {
    const t = await startBackend({ rateLimit: { ...WINDOW, perIp: 2, perEmail: 100 }, trustProxy: ["127.0.0.1", "10.0.0.0/8"] });
    const { url } = await serveHttp(t.backend);
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push(await verifyFrom(url, t.app.publishableKey, `203.0.113.${i}, 198.51.100.9, 10.1.1.1, 10.2.2.2`));
    expect(statuses).toEqual([400, 400, 429]);
  });

  it("counts an IPv6 client by its /64: rotating addresses inside it does not reset the limit", async () => {
    const t = await startBackend({ rateLimit: { ...WINDOW, perIp: 2, perEmail: 100 }, trustProxy: 1 });
    const { url } = await serveHttp(t.backend);
    const statuses = [];
    for (const a of ["2001:db8:1:2::1", "2001:db8:1:2:aaaa::5", "2001:0db8:0001:0002:ffff:ffff:ffff:ffff"]) statuses.push(await verifyFrom(url, t.app.publishableKey, a));
    expect(statuses).toEqual([400, 400, 429]);
    expect(await verifyFrom(url, t.app.publishableKey, "2001:db8:1:3::1")).toBe(400);
  });

  it("resolves chains, ports and mapped addresses the documented way", () => {
    const one = toTrustProxy(true);
    expect(resolveClientAddress("::ffff:127.0.0.1", "1.1.1.1, 2.2.2.2", one)).toBe("2.2.2.2");
    expect(resolveClientAddress("127.0.0.1", "1.1.1.1, 2.2.2.2", toTrustProxy(2))).toBe("1.1.1.1");
    expect(resolveClientAddress("127.0.0.1", "1.1.1.1", toTrustProxy(5))).toBe("1.1.1.1");
    expect(resolveClientAddress("127.0.0.1", "1.1.1.1", toTrustProxy(false))).toBe("127.0.0.1");
    expect(resolveClientAddress("203.0.113.5", "1.1.1.1", toTrustProxy(["loopback", "private"]))).toBe("203.0.113.5");
    expect(resolveClientAddress("127.0.0.1", "junk, 192.168.1.2", toTrustProxy(["loopback", "private"]))).toBe("192.168.1.2");
    expect(resolveClientAddress("127.0.0.1", "[2001:db8::1]:443", one)).toBe("2001:db8::1");
    expect(clientKey("2001:db8::1")).toBe("2001:db8:0:0::/64");
    expect(clientKey("203.0.113.9")).toBe("203.0.113.9");
  });

  it("refuses a malformed trustProxy at startup with the option's name", async () => {
    await expect(startBackend({ trustProxy: ["10.0.0.0/99"] })).rejects.toThrow(/trustProxy/);
    await expect(startBackend({ trustProxy: ["not an ip"] as string[] })).rejects.toThrow(/trustProxy/);
  });
});

void expectError;
