import { crc32 } from "node:zlib";

/**
 * A store-only ZIP writer, streamed: entries go out as their bytes arrive, each followed
 * by a data descriptor (its CRC and size are known only at its end), so nothing is held
 * but the central directory's few dozen bytes per entry. ZIP64 (sizes and offsets past
 * 4 GiB) is written where needed. Our own ~150 lines rather than a dependency: no
 * compression is wanted (the files are mostly compressed already, and records are read
 * once), and the packages that stream ZIP64 pull in their own stream stacks.
 */

export interface ZipEntry {
  /** path inside the archive, `/`-separated */
  name: string;
  data: Uint8Array | AsyncIterable<Uint8Array>;
  /** modification time, ms */
  mtime: number;
}

const MAX32 = 0xffffffff;
const FLAGS = 0x0808; // bit 3: sizes in a data descriptor; bit 11: UTF-8 names
const VERSION = 45; // 4.5: ZIP64

interface Written {
  name: Buffer;
  crc: number;
  size: number;
  offset: number;
  time: number;
  date: number;
}

/** MS-DOS time and date (local fields; we write UTC), from 1980 on. */
function dosTime(ms: number): { time: number; date: number } {
  const d = new Date(Math.max(ms, Date.UTC(1980, 0, 1)));
  return {
    time: (d.getUTCHours() << 11) | (d.getUTCMinutes() << 5) | Math.floor(d.getUTCSeconds() / 2),
    date: ((d.getUTCFullYear() - 1980) << 9) | ((d.getUTCMonth() + 1) << 5) | d.getUTCDate(),
  };
}

function localHeader(e: Written): Buffer {
  // Sizes unknown yet: 0xFFFFFFFF with a ZIP64 extra field says the descriptor holds 8-byte sizes.
  const extra = Buffer.alloc(20);
  extra.writeUInt16LE(0x0001, 0);
  extra.writeUInt16LE(16, 2);
  const h = Buffer.alloc(30);
  h.writeUInt32LE(0x04034b50, 0);
  h.writeUInt16LE(VERSION, 4);
  h.writeUInt16LE(FLAGS, 6);
  h.writeUInt16LE(0, 8); // stored
  h.writeUInt16LE(e.time, 10);
  h.writeUInt16LE(e.date, 12);
  h.writeUInt32LE(0, 14);
  h.writeUInt32LE(MAX32, 18);
  h.writeUInt32LE(MAX32, 22);
  h.writeUInt16LE(e.name.length, 26);
  h.writeUInt16LE(extra.length, 28);
  return Buffer.concat([h, e.name, extra]);
}

function descriptor(e: Written): Buffer {
  const d = Buffer.alloc(24);
  d.writeUInt32LE(0x08074b50, 0);
  d.writeUInt32LE(e.crc, 4);
  d.writeBigUInt64LE(BigInt(e.size), 8);
  d.writeBigUInt64LE(BigInt(e.size), 16);
  return d;
}

function centralEntry(e: Written): Buffer {
  const big = e.size >= MAX32 || e.offset >= MAX32;
  const extra = big ? Buffer.alloc(28) : Buffer.alloc(0);
  if (big) {
    extra.writeUInt16LE(0x0001, 0);
    extra.writeUInt16LE(24, 2);
    extra.writeBigUInt64LE(BigInt(e.size), 4);
    extra.writeBigUInt64LE(BigInt(e.size), 12);
    extra.writeBigUInt64LE(BigInt(e.offset), 20);
  }
  const h = Buffer.alloc(46);
  h.writeUInt32LE(0x02014b50, 0);
  h.writeUInt16LE((3 << 8) | VERSION, 4); // made by: Unix
  h.writeUInt16LE(VERSION, 6);
  h.writeUInt16LE(FLAGS, 8);
  h.writeUInt16LE(0, 10);
  h.writeUInt16LE(e.time, 12);
  h.writeUInt16LE(e.date, 14);
  h.writeUInt32LE(e.crc, 16);
  h.writeUInt32LE(big ? MAX32 : e.size, 20);
  h.writeUInt32LE(big ? MAX32 : e.size, 24);
  h.writeUInt16LE(e.name.length, 28);
  h.writeUInt16LE(extra.length, 30);
  h.writeUInt32LE(0o100644 * 0x10000, 38); // a regular file, rw-r--r--
  h.writeUInt32LE(big ? MAX32 : e.offset, 42);
  return Buffer.concat([h, e.name, extra]);
}

function end(count: number, cdOffset: number, cdSize: number): Buffer {
  const parts: Buffer[] = [];
  const big = count >= 0xffff || cdOffset >= MAX32 || cdSize >= MAX32;
  if (big) {
    const z = Buffer.alloc(56);
    z.writeUInt32LE(0x06064b50, 0);
    z.writeBigUInt64LE(44n, 4);
    z.writeUInt16LE(VERSION, 12);
    z.writeUInt16LE(VERSION, 14);
    z.writeBigUInt64LE(BigInt(count), 24);
    z.writeBigUInt64LE(BigInt(count), 32);
    z.writeBigUInt64LE(BigInt(cdSize), 40);
    z.writeBigUInt64LE(BigInt(cdOffset), 48);
    const locator = Buffer.alloc(20);
    locator.writeUInt32LE(0x07064b50, 0);
    locator.writeBigUInt64LE(BigInt(cdOffset + cdSize), 8);
    locator.writeUInt32LE(1, 16);
    parts.push(z, locator);
  }
  const e = Buffer.alloc(22);
  e.writeUInt32LE(0x06054b50, 0);
  e.writeUInt16LE(Math.min(count, 0xffff), 8);
  e.writeUInt16LE(Math.min(count, 0xffff), 10);
  e.writeUInt32LE(Math.min(cdSize, MAX32), 12);
  e.writeUInt32LE(Math.min(cdOffset, MAX32), 16);
  parts.push(e);
  return Buffer.concat(parts);
}

/** The archive's bytes, produced as the consumer reads them (a slow reader slows the reading of the sources). */
export async function* zipStream(entries: AsyncIterable<ZipEntry>): AsyncGenerator<Uint8Array> {
  const written: Written[] = [];
  let offset = 0;
  for await (const entry of entries) {
    const e: Written = { name: Buffer.from(entry.name, "utf8"), crc: 0, size: 0, offset, ...dosTime(entry.mtime) };
    const header = localHeader(e);
    yield header;
    offset += header.length;
    const chunks = entry.data instanceof Uint8Array ? [entry.data] : entry.data;
    for await (const chunk of chunks) {
      if (chunk.length === 0) continue;
      e.crc = crc32(chunk, e.crc);
      e.size += chunk.length;
      offset += chunk.length;
      yield chunk;
    }
    const d = descriptor(e);
    yield d;
    offset += d.length;
    written.push(e);
  }
  const cdOffset = offset;
  let cdSize = 0;
  for (const e of written) {
    const c = centralEntry(e);
    cdSize += c.length;
    yield c;
  }
  yield end(written.length, cdOffset, cdSize);
}
