/** UTC calendar arithmetic for usage periods and development-provider renewals. */

export type UsagePeriod = "monthly" | "daily";

export function periodStart(period: UsagePeriod, now: number): number {
  const d = new Date(now);
  return period === "monthly" ? Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1) : Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
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
