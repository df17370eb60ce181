import * as v from "valibot";

const KINDS: Record<string, string> = {
  Object: "a JSON object",
  Array: "an array",
  number: "a number",
  string: "a string",
  boolean: "true or false",
  bigint: "a number",
};

/**
 * A valibot issue as a sentence a person can act on: "body.data is required", "body.limit
 * must be a number (got "ten")". Messages written in our schemas are kept as they are.
 */
export function issueMessage(issue: v.BaseIssue<unknown>, where: string): string {
  const path = v.getDotPath(issue);
  const got = issue.received.length > 60 ? `${issue.received.slice(0, 57)}...` : issue.received;
  const field = path ? `${where}.${path}` : where;
  if (!issue.message.startsWith("Invalid ")) return path ? `${field}: ${issue.message}` : `${where}: ${issue.message}`;
  if (issue.kind === "schema" && /object$/.test(issue.type)) {
    if (issue.expected === "never") return `${field} is not a known field: check its spelling.`;
    if (issue.received === "undefined") return `${field} is required.`;
  }
  if (issue.kind === "schema" && issue.expected) {
    const choices = /^\((.*)\)$/.exec(issue.expected)?.[1];
    const wanted = choices ? `one of ${choices.split(" | ").join(", ")}` : (KINDS[issue.expected] ?? issue.expected);
    return `${field} must be ${wanted} (got ${got}).`;
  }
  if (issue.type === "integer") return `${field} must be a whole number (got ${got}).`;
  return `${field}: ${issue.message}`;
}
