import { lookup } from "node:dns/promises";
import { isIP } from "node:net";

/**
 * The SSRF guard: which addresses a webhook may connect to. Only globally routable unicast
 * passes; everything reserved by IANA for local, private, shared or special use is refused,
 * including IPv6 forms that embed an IPv4 address (mapped, NAT64, 6to4).
 */

type Range = readonly [prefix: number[], bits: number, reason: string];

const V4_REFUSED: Range[] = [
  [[0, 0, 0, 0], 8, "unspecified (0.0.0.0/8)"],
  [[10, 0, 0, 0], 8, "private (10.0.0.0/8)"],
  [[100, 64, 0, 0], 10, "shared CGNAT (100.64.0.0/10)"],
  [[127, 0, 0, 0], 8, "loopback (127.0.0.0/8)"],
  [[169, 254, 0, 0], 16, "link-local (169.254.0.0/16)"],
  [[172, 16, 0, 0], 12, "private (172.16.0.0/12)"],
  [[192, 0, 0, 0], 24, "IETF protocol assignments (192.0.0.0/24)"],
  [[192, 0, 2, 0], 24, "documentation (192.0.2.0/24)"],
  [[192, 88, 99, 0], 24, "6to4 relay (192.88.99.0/24)"],
  [[192, 168, 0, 0], 16, "private (192.168.0.0/16)"],
  [[198, 18, 0, 0], 15, "benchmarking (198.18.0.0/15)"],
  [[198, 51, 100, 0], 24, "documentation (198.51.100.0/24)"],
  [[203, 0, 113, 0], 24, "documentation (203.0.113.0/24)"],
  [[224, 0, 0, 0], 4, "multicast (224.0.0.0/4)"],
  [[240, 0, 0, 0], 4, "reserved (240.0.0.0/4)"],
];

// Within global unicast 2000::/3, the special-purpose blocks.
const V6_GLOBAL_REFUSED: Range[] = [
  [[0x20, 0x01, 0x0d, 0xb8], 32, "documentation (2001:db8::/32)"],
  [[0x20, 0x01, 0x00, 0x00], 23, "IETF protocol assignments (2001::/23)"],
  [[0x3f, 0xff, 0x00, 0x00], 20, "documentation (3fff::/20)"],
];

function inRange(bytes: number[], prefix: number[], bits: number): boolean {
  for (let i = 0; i < bits; i += 8) {
    const take = Math.min(8, bits - i);
    const mask = (0xff << (8 - take)) & 0xff;
    if ((bytes[i / 8]! & mask) !== ((prefix[i / 8] ?? 0) & mask)) return false;
  }
  return true;
}

function v4Reason(bytes: number[]): string | null {
  for (const [prefix, bits, reason] of V4_REFUSED) if (inRange(bytes, prefix, bits)) return reason;
  return null;
}

/** 16 bytes of an IPv6 address (zone removed), or null when it does not parse. */
export function parseIPv6(address: string): number[] | null {
  let text = address.split("%")[0]!;
  // A dotted IPv4 tail (::ffff:1.2.3.4) becomes the two hex groups it stands for.
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    if (isIP(dotted[1]!) !== 4) return null;
    const [a, b, c, d] = dotted[1]!.split(".").map(Number) as [number, number, number, number];
    text = text.slice(0, -dotted[1]!.length) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = text.split("::");
  if (halves.length > 2) return null;
  const parse = (s: string) => (s === "" ? [] : s.split(":").map((h) => (/^[0-9a-f]{1,4}$/i.test(h) ? parseInt(h, 16) : NaN)));
  const head = parse(halves[0]!);
  const rest = halves.length === 2 ? parse(halves[1]!) : [];
  const known = head.length + rest.length;
  if ((halves.length === 1 && known !== 8) || known > 8 || [...head, ...rest].some(Number.isNaN)) return null;
  const groups = [...head, ...Array<number>(8 - known).fill(0), ...rest];
  return groups.flatMap((g) => [g >> 8, g & 0xff]);
}

function v6Reason(bytes: number[]): string | null {
  const embedded = (offset: number) => bytes.slice(offset, offset + 4);
  // ::ffff:a.b.c.d reaches the IPv4 address itself: judge that.
  if (inRange(bytes, [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff], 96)) {
    const r = v4Reason(embedded(12));
    return r && `IPv4-mapped ${r}`;
  }
  if (inRange(bytes, [0, 0x64, 0xff, 0x9b], 96)) {
    const r = v4Reason(embedded(12));
    return r && `NAT64 ${r}`;
  }
  if (inRange(bytes, [0x20, 0x02], 16)) {
    const r = v4Reason(embedded(2));
    return r && `6to4 ${r}`;
  }
  if (bytes.every((b) => b === 0)) return "unspecified (::)";
  if (bytes.slice(0, 15).every((b) => b === 0) && bytes[15] === 1) return "loopback (::1)";
  if (inRange(bytes, [0xfc], 7)) return "unique local (fc00::/7)";
  if (inRange(bytes, [0xfe, 0x80], 10)) return "link-local (fe80::/10)";
  if (inRange(bytes, [0xff], 8)) return "multicast (ff00::/8)";
  if (!inRange(bytes, [0x20], 3)) return "not global unicast (outside 2000::/3)";
  for (const [prefix, bits, reason] of V6_GLOBAL_REFUSED) if (inRange(bytes, prefix, bits)) return reason;
  return null;
}

/** Why an address is refused as a webhook target, or null when it is public. */
export function refusedAddressReason(address: string): string | null {
  const family = isIP(address.split("%")[0]!);
  if (family === 4) return v4Reason(address.split(".").map(Number));
  if (family === 6) {
    const bytes = parseIPv6(address);
    return bytes ? v6Reason(bytes) : "not a valid IP address";
  }
  return "not an IP address";
}

export interface VettedTarget {
  address: string;
  family: 4 | 6;
}

/**
 * `message` names the address and why (for the server log); `publicMessage` is what the
 * delivery log shows the app's developer, who must not learn what internal names resolve to.
 */
export class RefusedTargetError extends Error {
  constructor(
    message: string,
    readonly publicMessage: string = message,
  ) {
    super(message);
  }
}

/**
 * Resolves the host and returns the address to connect to. Every resolved address must
 * pass (a host that also resolves to an internal address is refused), so a rebinding DNS
 * answer cannot slip an internal address in beside a public one.
 */
export async function vetHost(hostname: string, allowInsecure: boolean): Promise<VettedTarget> {
  const host = hostname.replace(/^\[|\]$/g, "");
  // One public message whether the name does not resolve or resolves to an internal address:
  // told apart, the delivery log would say which internal names exist.
  const notPublic = `refused: ${host} is not a public address (development receivers on this machine need the server started with TENANTD_WEBHOOKS_ALLOW_INSECURE=1)`;
  const unresolved = (why: string) => new RefusedTargetError(`cannot resolve ${host}: ${why}`, allowInsecure ? `cannot resolve ${host}: ${why}` : notPublic);
  const literal = isIP(host);
  const found = literal
    ? [{ address: host, family: literal }]
    : await lookup(host, { all: true, verbatim: true }).catch((e: NodeJS.ErrnoException) => {
        throw unresolved(e.code ?? e.message);
      });
  if (found.length === 0) throw unresolved("no addresses");
  if (!allowInsecure) {
    for (const a of found) {
      const reason = refusedAddressReason(a.address);
      if (reason) {
        throw new RefusedTargetError(
          `refused target ${host} (${a.address}): ${reason} address (development receivers on this machine need the server started with TENANTD_WEBHOOKS_ALLOW_INSECURE=1)`,
          notPublic,
        );
      }
    }
  }
  const first = found[0]!;
  return { address: first.address, family: first.family === 6 ? 6 : 4 };
}
