import { describe, expect, it } from "vitest";
import { parseIPv6, refusedAddressReason, vetHost } from "../src/webhooks/address-guard.ts";

describe("the SSRF address classifier", () => {
  it.each([
    ["127.0.0.1", "loopback"],
    ["127.255.0.9", "loopback"],
    ["10.0.0.1", "private"],
    ["10.255.255.255", "private"],
    ["172.16.0.1", "private"],
    ["172.31.255.255", "private"],
    ["192.168.1.1", "private"],
    ["169.254.169.254", "link-local"],
    ["100.64.0.1", "CGNAT"],
    ["100.127.255.255", "CGNAT"],
    ["0.0.0.0", "unspecified"],
    ["224.0.0.1", "multicast"],
    ["239.255.255.250", "multicast"],
    ["255.255.255.255", "reserved"],
    ["240.0.0.1", "reserved"],
    ["192.0.2.10", "documentation"],
    ["198.18.0.1", "benchmarking"],
    ["::1", "loopback"],
    ["::", "unspecified"],
    ["0:0:0:0:0:0:0:1", "loopback"],
    ["fe80::1", "link-local"],
    ["fe80::1%eth0", "link-local"],
    ["fc00::1", "unique local"],
    ["fd12:3456::1", "unique local"],
    ["ff02::1", "multicast"],
    ["::ffff:127.0.0.1", "IPv4-mapped loopback"],
    ["::ffff:7f00:1", "IPv4-mapped loopback"],
    ["::ffff:10.0.0.1", "IPv4-mapped private"],
    ["::ffff:169.254.169.254", "IPv4-mapped link-local"],
    ["64:ff9b::a00:1", "NAT64 private"],
    ["2002:7f00:1::", "6to4 loopback"],
    ["2001:db8::1", "documentation"],
    ["::127.0.0.1", "not global unicast"],
    ["100::1", "not global unicast"],
  ])("refuses %s (%s)", (address, reason) => {
    expect(refusedAddressReason(address)).toContain(reason);
  });

  it.each(["93.184.216.34", "8.8.8.8", "1.1.1.1", "172.32.0.1", "100.128.0.1", "192.169.0.1", "2606:4700:4700::1111", "2a00:1450:4001:80b::200e", "::ffff:8.8.8.8", "64:ff9b::808:808", "2002:808:808::1"])(
    "allows the public address %s",
    (address) => {
      expect(refusedAddressReason(address)).toBeNull();
    },
  );

  it("parses the IPv6 forms it judges", () => {
    expect(parseIPv6("::ffff:1.2.3.4")).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 1, 2, 3, 4]);
    expect(parseIPv6("2001:db8::8:800:200c:417a")).toEqual([0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 8, 8, 0, 0x20, 0x0c, 0x41, 0x7a]);
    for (const bad of ["1::2::3", "12345::", "1:2:3", "g::1", "::1.2.3.999"]) expect(parseIPv6(bad)).toBeNull();
  });

  it("vets host names by every address they resolve to, unless insecure targets are allowed", async () => {
    await expect(vetHost("localhost", false)).rejects.toThrow("refused target localhost (127.0.0.1): loopback (127.0.0.0/8) address");
    await expect(vetHost("[::1]", false)).rejects.toThrow("loopback (::1)");
    await expect(vetHost("localhost", true)).resolves.toEqual({ address: "127.0.0.1", family: 4 });
    await expect(vetHost("no-such-host.invalid", true)).rejects.toThrow(/cannot resolve no-such-host\.invalid/);
    await expect(vetHost("8.8.8.8", false)).resolves.toEqual({ address: "8.8.8.8", family: 4 });
  });
});
