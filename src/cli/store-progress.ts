import type { CopyProgress } from "../db/copy/run.ts";

const WIDTH = 24;
const n = (x: number) => x.toLocaleString("en-US");
const rowsOf = (x: number) => `${n(x)} ${x === 1 ? "row" : "rows"}`;

/**
 * Progress on stderr: on a terminal, a bar per table redrawn in place (rows done / total);
 * otherwise (a log, a pipe) one plain line per table when it is done.
 */
export function stderrProgress(out: NodeJS.WriteStream = process.stderr): CopyProgress & { blobs(done: number, total: number): void; blobsDone(copied: number, bytes: number, ms: number): void } {
  const tty = out.isTTY === true;
  let lastDraw = 0;
  const draw = (label: string, done: number, total: number, force = false) => {
    if (!tty) return;
    const now = Date.now();
    if (!force && now - lastDraw < 100) return;
    lastDraw = now;
    const filled = total === 0 ? WIDTH : Math.min(WIDTH, Math.round((done / total) * WIDTH));
    out.write(`\r\u001b[2K  ${label.padEnd(22)} [${"#".repeat(filled)}${".".repeat(WIDTH - filled)}] ${n(done)}/${n(total)}`);
  };
  const finish = (line: string) => out.write(`${tty ? "\r\u001b[2K" : ""}  ${line}\n`);
  return {
    table: (name, total) => draw(name, 0, total, true),
    rows: (name, done, total) => draw(name, done, total),
    tableDone: (name, rows, ms) => finish(`${name.padEnd(22)} ${rowsOf(rows)} (${(ms / 1000).toFixed(1)} s)`),
    blobs: (done, total) => draw("file blobs", done, total),
    blobsDone: (copied, bytes, ms) => finish(`${"file blobs".padEnd(22)} ${n(copied)} ${copied === 1 ? "blob" : "blobs"}, ${n(bytes)} bytes (${(ms / 1000).toFixed(1)} s)`),
  };
}
