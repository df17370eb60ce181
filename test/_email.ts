import { SMTPServer } from "smtp-server";
import type { AddressInfo } from "node:net";
import { afterEach } from "vitest";
import { mailerFor } from "../src/email/mailer.ts";
import type { OutboxMessage } from "../src/db/types.ts";
import type { TestBackend } from "./_helpers.ts";

/** Waits for queued emails, then returns the outbox messages to `to`, newest first. */
export async function outboxFor(t: TestBackend, to: string): Promise<OutboxMessage[]> {
  await mailerFor(t.backend.core).idle();
  return (await t.backend.core.db.outbox.list({ limit: 1000 })).filter((m) => m.to === to);
}

/** The token in the newest email to `to` (from the link's `token` query parameter). */
export async function tokenFromOutbox(t: TestBackend, to: string, kind: "verify" | "reset" | "export"): Promise<string> {
  const message = (await outboxFor(t, to)).find((m) => m.kind === kind);
  if (!message?.link) throw new Error(`no ${kind} email to ${to}`);
  return new URL(message.link).searchParams.get("token")!;
}

export interface ReceivedEmail {
  from: string;
  to: string[];
  subject: string;
  text: string;
  html: string;
}

const decodeWords = (s: string) =>
  s.replace(/=\?([^?]+)\?([BbQq])\?([^?]*)\?=\s*/g, (_, _cs, enc: string, data: string) =>
    enc.toUpperCase() === "B" ? Buffer.from(data, "base64").toString("utf8") : decodeQp(data.replace(/_/g, " ")),
  );

function decodeQp(s: string): string {
  const soft = s.replace(/=\r?\n/g, "");
  const bytes: number[] = [];
  for (let i = 0; i < soft.length; i++) {
    if (soft[i] === "=" && /^[0-9A-Fa-f]{2}$/.test(soft.slice(i + 1, i + 3))) {
      bytes.push(parseInt(soft.slice(i + 1, i + 3), 16));
      i += 2;
    } else bytes.push(...Buffer.from(soft[i]!, "utf8"));
  }
  return Buffer.from(bytes).toString("utf8");
}

function splitPart(raw: string): { headers: Map<string, string>; body: string } {
  const at = raw.search(/\r?\n\r?\n/);
  const head = raw.slice(0, at).replace(/\r?\n[ \t]+/g, " ");
  const headers = new Map<string, string>();
  for (const line of head.split(/\r?\n/)) {
    const i = line.indexOf(":");
    if (i > 0) headers.set(line.slice(0, i).trim().toLowerCase(), line.slice(i + 1).trim());
  }
  return { headers, body: raw.slice(at).replace(/^\r?\n\r?\n/, "") };
}

function decodeBody(headers: Map<string, string>, body: string): string {
  const enc = (headers.get("content-transfer-encoding") ?? "").toLowerCase();
  if (enc === "base64") return Buffer.from(body.replace(/\s+/g, ""), "base64").toString("utf8");
  if (enc === "quoted-printable") return decodeQp(body);
  return body;
}

/** Just enough MIME for nodemailer's output: one text part and one html part. */
export function parseEmail(raw: string): Omit<ReceivedEmail, "to"> {
  const { headers, body } = splitPart(raw);
  const out = { from: decodeWords(headers.get("from") ?? ""), subject: decodeWords(headers.get("subject") ?? ""), text: "", html: "" };
  const boundary = /boundary="?([^";]+)"?/.exec(headers.get("content-type") ?? "")?.[1];
  const parts = boundary ? body.split(`--${boundary}`).slice(1, -1).map((p) => splitPart(p.replace(/^\r?\n/, ""))) : [{ headers, body }];
  for (const part of parts) {
    const type = part.headers.get("content-type") ?? "text/plain";
    const text = decodeBody(part.headers, part.body).replace(/\r\n/g, "\n");
    if (type.startsWith("text/html")) out.html = text;
    else if (type.startsWith("text/plain")) out.text = text;
  }
  return out;
}

/** A real SMTP server (smtp-server) on a free port, closed after the test. `hold` delays every connection's greeting until it resolves. */
export async function startSmtp(opts: { hold?: Promise<void> } = {}) {
  const received: ReceivedEmail[] = [];
  const waiters: (() => void)[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    logger: false,
    onConnect(_session, callback) {
      void (opts.hold ?? Promise.resolve()).then(() => callback());
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => {
        received.push({ ...parseEmail(Buffer.concat(chunks).toString("utf8")), to: session.envelope.rcptTo.map((r) => r.address) });
        waiters.splice(0).forEach((w) => w());
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanup.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const port = (server.server.address() as AddressInfo).port;
  return {
    port,
    received,
    /** Resolves with the first email to `to` (waiting for it to arrive). */
    async waitFor(to: string): Promise<ReceivedEmail> {
      for (;;) {
        const found = received.find((m) => m.to.includes(to));
        if (found) return found;
        await new Promise<void>((resolve) => waiters.push(resolve));
      }
    },
  };
}

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanup.length) await cleanup.pop()!();
});
