const PLAIN = /^[\w.:-]*$/;

/**
 * A string as JSON text: as it is between quotes when it holds nothing JSON escapes (ids,
 * tokens, ISO times), else through JSON.stringify. Replies written by hand use it because
 * JSON.stringify walks every character of every string (docs/performance.md).
 */
export function jsonString(s: string): string {
  return PLAIN.test(s) ? `"${s}"` : JSON.stringify(s);
}
