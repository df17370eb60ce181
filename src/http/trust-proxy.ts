import { BlockList, isIP } from "node:net";
import * as v from "valibot";

/** The `trustProxy` option: `true` (one proxy), a number of proxy hops, or the proxies' addresses and CIDRs. */
export type TrustProxyOption = boolean | number | string[];

/** Which hops of the forwarded chain are proxies of the operator's (index 0 = the socket peer). */
export type TrustProxy = false | { isTrusted(address: string, hop: number): boolean; describe: string };

/** Names loopback, private and link-local ranges in one word, for the common "proxy on this network" setup. */
const NAMED: Record<string, string[]> = {
  loopback: ["127.0.0.0/8", "::1/128"],
  private: ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7"],
  linklocal: ["169.254.0.0/16", "fe80::/10"],
};

function validCidr(entry: string): boolean {
  if (Object.hasOwn(NAMED, entry)) return true;
  const [addr, bits, extra] = entry.split("/");
  const family = isIP(addr ?? "");
  if (family === 0 || extra !== undefined) return false;
  if (bits === undefined) return true;
  const n = Number(bits);
  return /^\d{1,3}$/.test(bits) && n <= (family === 4 ? 32 : 128);
}

export const TrustProxySchema = v.union(
  [
    v.boolean(),
    v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(10)),
    v.pipe(v.array(v.pipe(v.string(), v.check(validCidr, "must list IP addresses or CIDRs such as 10.0.0.0/8 or fd00::/8, or loopback, private, linklocal"))), v.minLength(1)),
  ],
  "must be true/false, a number of proxy hops (0-10), or a list of proxy addresses/CIDRs",
);


export function toTrustProxy(option: TrustProxyOption): TrustProxy {
  if (option === false || option === 0) return false;
  if (option === true || typeof option === "number") {
    const hops = option === true ? 1 : option;
    return { isTrusted: (_address, hop) => hop < hops, describe: `${hops} hop${hops === 1 ? "" : "s"}` };
  }
  const list = new BlockList();
  for (const entry of option.flatMap((e) => NAMED[e] ?? [e])) {
    const [addr, bits] = entry.split("/") as [string, string | undefined];
    const type = isIP(addr) === 6 ? "ipv6" : "ipv4";
    if (bits === undefined) list.addAddress(addr, type);
    else list.addSubnet(addr, Number(bits), type);
  }
  return { isTrusted: (address) => list.check(address, isIP(address) === 6 ? "ipv6" : "ipv4"), describe: option.join(", ") };
}

/** `1.2.3.4:80`, `[::1]:80` and `::ffff:1.2.3.4` name the same host as the bare address. */
function bareAddress(raw: string): string | null {
  let s = raw.trim();
  const bracket = /^\[([^\]]+)\](?::\d+)?$/.exec(s);
  if (bracket) s = bracket[1]!;
  else if (/^[\d.]+:\d+$/.test(s)) s = s.slice(0, s.lastIndexOf(":"));
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(s);
  if (mapped) s = mapped[1]!;
  return isIP(s) ? s : null;
}

/**
 * The client's address: walking the chain from the socket peer leftwards through
 * `x-forwarded-for`, the first hop that is not a trusted proxy. Entries left of it were
 * written by the client and are ignored, so a forged header changes nothing.
 */
export function resolveClientAddress(socketAddress: string | undefined, forwardedFor: string | null, trust: TrustProxy): string | undefined {
  const peer = socketAddress === undefined ? null : bareAddress(socketAddress);
  if (trust === false || !forwardedFor) return peer ?? socketAddress;
  const chain = forwardedFor.split(",").reverse();
  // Without a socket (app.fetch under a host that hides it) the host itself is the first proxy.
  let client = peer ?? "";
  for (let hop = 0; hop < chain.length && (peer === null && hop === 0 ? true : trust.isTrusted(client, hop)); hop++) {
    const next = bareAddress(chain[hop]!);
    // A trusted proxy writes addresses; anything else came from the client side of it.
    if (next === null) break;
    client = next;
  }
  return client === "" ? undefined : client;
}

/**
 * The key a per-client limit counts under. An IPv6 host usually holds a whole /64, so it is
 * keyed by its /64 prefix: rotating addresses inside it does not reset the count.
 */
export function clientKey(address: string): string {
  if (isIP(address) !== 6) return address;
  const [head = "", tail = ""] = address.toLowerCase().split("::");
  const left = head ? head.split(":") : [];
  const right = tail ? tail.split(":") : [];
  const groups = address.includes("::") ? [...left, ...Array(Math.max(0, 8 - left.length - right.length)).fill("0"), ...right] : left;
  return `${groups.slice(0, 4).map((g) => g.replace(/^0+(?=.)/, "")).join(":")}::/64`;
}
