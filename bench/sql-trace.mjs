// Records the SQL and parameters of every statement a request runs, by wrapping the
// better-sqlite3 Statement methods for the length of one traced request. Off otherwise,
// so the benchmark itself runs unwrapped.
const METHODS = ["get", "all", "iterate", "run"];

export function startSqlTrace(db) {
  const proto = Object.getPrototypeOf(db.prepare("SELECT 1"));
  const originals = Object.fromEntries(METHODS.map((m) => [m, proto[m]]));
  const seen = [];
  for (const m of METHODS) {
    proto[m] = function (...args) {
      seen.push({ sql: this.source, args });
      return originals[m].apply(this, args);
    };
  }
  return {
    stop() {
      for (const m of METHODS) proto[m] = originals[m];
      return seen;
    },
  };
}
