import type { Core } from "../core.ts";
import { AUDIT_GENESIS } from "../db/shared.ts";
import { sealEntry } from "./audit.ts";

export type ChainReport =
  | { appId: string; ok: true; entries: number; firstSeq: number | null; lastSeq: number; prunedSeq: number }
  | { appId: string; ok: false; entries: number; seq: number; reason: string };

const PAGE = 1000;

/**
 * Walks the app's kept chain from where retention cut it (the head keeps that entry's
 * hash) to the head: every seq follows the previous one, every entry names the previous
 * hash and its own hash is its HMAC. A chain pruned while it was walked is walked again.
 */
export async function verifyChain(core: Core, appId: string): Promise<ChainReport> {
  for (let attempt = 0; ; attempt++) {
    const report = await walk(core, appId);
    if (report.ok || attempt === 2) return report;
    const head = await core.db.audit.head(appId);
    // A cut that moved during the walk explains a missing entry: walk again from the new cut.
    if (!head || head.prunedSeq === report.startedAt) return report;
  }
}

async function walk(core: Core, appId: string): Promise<ChainReport & { startedAt: number }> {
  const head = await core.db.audit.head(appId);
  if (!head) return { appId, ok: true, entries: 0, firstSeq: null, lastSeq: 0, prunedSeq: 0, startedAt: 0 };
  let seq = head.prunedSeq;
  let hash = head.prunedSeq === 0 ? AUDIT_GENESIS : head.prunedHash;
  let entries = 0;
  let firstSeq: number | null = null;
  const broken = (at: number, reason: string) => ({ appId, ok: false as const, entries, seq: at, reason, startedAt: head.prunedSeq });
  while (seq < head.seq) {
    const page = await core.db.audit.chain(appId, seq, Math.min(PAGE, head.seq - seq));
    if (page.length === 0) return broken(seq + 1, `entries ${seq + 1} to ${head.seq} are missing (the head says the chain reaches ${head.seq})`);
    for (const e of page) {
      if (e.seq > head.seq) break;
      if (e.seq !== seq + 1) return broken(seq + 1, `entry ${seq + 1} is missing (the next one kept is ${e.seq})`);
      if (e.prevHash !== hash) return broken(e.seq, `entry ${e.seq} does not name the hash of entry ${seq} (an entry before it was changed, removed or inserted)`);
      const { hash: stored, ...rest } = e;
      if (sealEntry(core, rest) !== stored) return broken(e.seq, `entry ${e.seq} was changed after it was written (its hash does not match its fields)`);
      firstSeq ??= e.seq;
      seq = e.seq;
      hash = stored;
      entries++;
    }
  }
  if (hash !== head.hash) return broken(seq, `the last entry's hash is not the one the head recorded`);
  return { appId, ok: true, entries, firstSeq, lastSeq: seq, prunedSeq: head.prunedSeq, startedAt: head.prunedSeq };
}
