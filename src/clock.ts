/** Milliseconds since the epoch. Injected so expiry can be tested without sleeping. */
export type Clock = () => number;

export const systemClock: Clock = () => Date.now();

export function toIso(ms: number | null | undefined): string | null {
  return ms == null ? null : new Date(ms).toISOString();
}
