import { hostname } from "node:os";
import type { Core } from "../core.ts";
import { withTimeout } from "./run.ts";
import type { CronJob } from "./types.ts";

const MINUTE = 60_000;
const UNITS: Record<string, number> = { ms: 1, s: 1000, m: MINUTE, h: 60 * MINUTE, d: 24 * 60 * MINUTE };
/** Runs are kept this long for the admin endpoint, then housekeeping drops them. */
export const CRON_RETENTION_MS = 7 * 24 * 60 * MINUTE;
const DEFAULT_JOB_TIMEOUT_MS = 60_000;

/** A schedule: the first slot strictly after a time (ms). */
export interface Schedule {
  next(after: number): number;
}

/** One field of a cron expression: `*`, `5`, `1-5`, `*\/15`, `1,15,30` and their mixes. */
function field(text: string, min: number, max: number, name: string): Set<number> | null {
  if (text === "*") return null;
  const values = new Set<number>();
  for (const part of text.split(",")) {
    const m = /^(\*|(\d+)(?:-(\d+))?)(?:\/(\d+))?$/.exec(part);
    if (!m) throw new Error(`${name} field "${text}" is not a cron field (*, 5, 1-5, */15, 1,15)`);
    const from = m[1] === "*" ? min : Number(m[2]);
    const to = m[1] === "*" ? max : m[3] !== undefined ? Number(m[3]) : m[4] !== undefined ? max : from;
    const step = m[4] !== undefined ? Number(m[4]) : 1;
    if (from < min || to > max || from > to || step < 1) throw new Error(`${name} field "${text}" is out of range (${min}-${max})`);
    for (let v = from; v <= to; v += step) values.add(v);
  }
  return values;
}

/**
 * `every 30s` / `@every 5m` (ms, s, m, h, d; slots aligned to the epoch, so every node
 * agrees on them), or a five-field cron expression read in UTC. Throws, saying why, on
 * anything else.
 */
export function parseSchedule(text: string): Schedule {
  const every = /^(?:@?every\s+)?(\d+)\s*(ms|s|m|h|d)$/.exec(text.trim());
  if (every) {
    const ms = Number(every[1]) * UNITS[every[2]!]!;
    if (ms < 1000) throw new Error(`"${text}": the shortest schedule is every 1s`);
    return { next: (after) => (Math.floor(after / ms) + 1) * ms };
  }
  const parts = text.trim().split(/\s+/);
  if (parts.length !== 5) throw new Error(`"${text}" is neither "every <n>s|m|h|d" nor a five-field cron expression (minute hour day month weekday)`);
  const [minute, hour, day, month, weekday] = [field(parts[0]!, 0, 59, "minute"), field(parts[1]!, 0, 23, "hour"), field(parts[2]!, 1, 31, "day"), field(parts[3]!, 1, 12, "month"), field(parts[4]!, 0, 7, "weekday")];
  if (weekday?.has(7)) weekday.add(0);
  const ok = (set: Set<number> | null, v: number) => set === null || set.has(v);
  return {
    next(after) {
      let t = (Math.floor(after / MINUTE) + 1) * MINUTE;
      // At most a leap year of minutes: an expression that matches no date (31 February) stops here.
      for (let i = 0; i < 366 * 24 * 60; i++, t += MINUTE) {
        const d = new Date(t);
        // Cron's rule: with both day fields restricted, either one matching is enough.
        const dayOk = day !== null && weekday !== null ? day.has(d.getUTCDate()) || weekday.has(d.getUTCDay()) : ok(day, d.getUTCDate()) && ok(weekday, d.getUTCDay());
        if (ok(minute, d.getUTCMinutes()) && ok(hour, d.getUTCHours()) && ok(month, d.getUTCMonth() + 1) && dayOk) return t;
      }
      return Number.POSITIVE_INFINITY;
    },
  };
}

/** This process among the nodes, as runs record it. */
export const NODE_NAME = `${hostname()}#${process.pid}`;

/**
 * Runs each job at each of its slots, on exactly one node: every node wakes at the slot and
 * claims the (job, slot) row; the one whose insert lands runs it, the others see it taken.
 * A slot no node was up for is not made up later.
 */
export function startCron(core: Core, jobs: CronJob[]): void {
  const timers = new Set<NodeJS.Timeout>();
  let stopped = false;
  core.onClose(() => {
    stopped = true;
    for (const t of timers) clearTimeout(t);
  });
  for (const job of jobs) {
    const schedule = parseSchedule(job.schedule);
    const arm = (after: number) => {
      const at = schedule.next(after);
      if (!Number.isFinite(at) || stopped) return;
      const timer = setTimeout(() => {
        timers.delete(timer);
        arm(at);
        void fire(job, at);
      }, Math.max(0, at - core.clock()));
      timer.unref();
      timers.add(timer);
    };
    arm(core.clock());
  }

  async function fire(job: CronJob, slot: number): Promise<void> {
    try {
      if (!(await core.db.cron.claim(job.name, slot, NODE_NAME, core.clock()))) return;
    } catch (e) {
      core.log.error("cron job could not be claimed", { job: job.name, error: e });
      return;
    }
    let error: string | null = null;
    try {
      await withTimeout(job.timeoutMs ?? DEFAULT_JOB_TIMEOUT_MS, () => job.fn({ name: job.name, scheduledAt: new Date(slot) }));
    } catch (e) {
      error = e instanceof Error ? e.message : String(e);
      core.log.error("cron job failed", { job: job.name, scheduledAt: new Date(slot).toISOString(), error: e });
    }
    try {
      await core.db.cron.finish(job.name, slot, error === null ? "ok" : "failed", error?.slice(0, 2000) ?? null, core.clock());
    } catch (e) {
      core.log.error("cron run could not be recorded", { job: job.name, error: e });
    }
  }
}
