/** UTC calendar arithmetic for usage periods and development-provider renewals. */

export type UsagePeriod = "monthly" | "daily";

// The last period of each kind worked out: every increment asks, and nearly all within one.
const lastPeriod: Record<UsagePeriod, { from: number; until: number }> = { monthly: { from: 0, until: 0 }, daily: { from: 0, until: 0 } };

export function periodStart(period: UsagePeriod, now: number): number {
  const last = lastPeriod[period];
  if (now >= last.from && now < last.until) return last.from;
  const d = new Date(now);
  const [year, month, day] = [d.getUTCFullYear(), d.getUTCMonth(), period === "monthly" ? 1 : d.getUTCDate()];
  const next = period === "monthly" ? Date.UTC(year, month + 1, 1) : Date.UTC(year, month, day + 1);
  lastPeriod[period] = { from: Date.UTC(year, month, day), until: next };
  return lastPeriod[period].from;
}

/** `from` plus `n` months or years, clamped to the month's last day (Jan 31 + 1 month = Feb 28/29). */
export function addInterval(from: number, interval: "month" | "year", n = 1): number {
  const d = new Date(from);
  const months = interval === "month" ? n : 12 * n;
  const target = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + months, 1, d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds(), d.getUTCMilliseconds()));
  const lastDay = new Date(Date.UTC(target.getUTCFullYear(), target.getUTCMonth() + 1, 0)).getUTCDate();
  target.setUTCDate(Math.min(d.getUTCDate(), lastDay));
  return target.getTime();
}

/** The first period end after `now`, renewing from `end` one interval at a time. */
export function devPeriodEnd(end: number, now: number, interval: "month" | "year"): number {
  let n = 1;
  let next = addInterval(end, interval, n);
  while (next <= now) next = addInterval(end, interval, ++n);
  return next;
}
