export interface Logger {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

// Field names whose values never reach a log line, whatever area logs them.
const SECRET_FIELD = /pass(word)?|secret|token|key|authorization|cookie|hash/i;

function redact(fields: Record<string, unknown> | undefined): string {
  if (!fields) return "";
  const safe: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(fields)) {
    safe[k] = SECRET_FIELD.test(k) ? "[redacted]" : v instanceof Error ? v.message : v;
  }
  return " " + JSON.stringify(safe);
}

export function createConsoleLogger(level: "silent" | "error" | "info" = "info"): Logger {
  const write = (lvl: string, message: string, fields?: Record<string, unknown>) =>
    process.stderr.write(`[tenantd] ${lvl} ${message}${redact(fields)}\n`);
  return {
    info: (m, f) => level === "info" && write("info", m, f),
    warn: (m, f) => level !== "silent" && write("warn", m, f),
    error: (m, f) => level !== "silent" && write("error", m, f),
  };
}
