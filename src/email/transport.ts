import { newId } from "../crypto/random.ts";
import type { Core } from "../core.ts";
import { ShownInLogs } from "../log.ts";

export interface OutgoingEmail {
  appId: string;
  tenantId: string | null;
  kind: string;
  locale: string;
  from: string;
  to: string;
  subject: string;
  text: string;
  html: string;
  /** the action link, shown by the outbox and its log line */
  link: string | null;
}

export interface EmailTransport {
  send(message: OutgoingEmail): Promise<void>;
  close(): void;
}

/** SMTP through nodemailer (`config.email.transport: "smtp"`). */
async function smtpTransport(core: Core): Promise<EmailTransport> {
  // Loaded on first use: a CLI command that sends no mail does not pay for nodemailer.
  const { createTransport } = await import("nodemailer");
  const smtp = core.config.email.smtp!;
  const transporter = createTransport({
    host: smtp.host,
    port: smtp.port,
    secure: smtp.secure ?? smtp.port === 465,
    ignoreTLS: smtp.ignoreTLS,
    auth: smtp.user ? { user: smtp.user, pass: smtp.pass } : undefined,
  });
  return {
    async send(m) {
      await transporter.sendMail({ from: m.from, to: m.to, subject: m.subject, text: m.text, html: m.html });
    },
    close: () => transporter.close(),
  };
}

/**
 * The development outbox: the message is stored (listed by `tenantd mail list`) and its
 * link logged, so a person can follow it without a mail server.
 */
function outboxTransport(core: Core): EmailTransport {
  const insert = async (m: OutgoingEmail) => {
    await core.db.outbox.insert({
      id: newId("msg"),
      appId: m.appId,
      tenantId: m.tenantId,
      kind: m.kind,
      locale: m.locale,
      to: m.to,
      subject: m.subject,
      text: m.text,
      html: m.html,
      link: m.link,
      createdAt: core.clock(),
    });
    // In development the link is the point of the outbox (a person follows it instead of
    // reading mail), so it passes redaction; in production a token-bearing link never reaches a log.
    if (core.config.mode === "development") core.log.info(`email (outbox) to ${m.to}: ${m.subject}`, { url: m.link ? new ShownInLogs(m.link) : null });
    else core.log.info(`email (outbox) to ${m.to}: ${m.subject}`, { kind: m.kind });
  };
  // One insert at a time, in the order the messages were queued: on PostgreSQL two inserts
  // on two pooled connections may commit in either order, and the outbox lists newest
  // first, so a second verification email could be listed under the first it replaced.
  let previous: Promise<unknown> = Promise.resolve();
  const store = (m: OutgoingEmail) => {
    const done = previous.then(() => insert(m));
    previous = done.catch(() => undefined);
    return done;
  };
  return {
    send: store,
    close() {},
  };
}

export async function createEmailTransport(core: Core): Promise<EmailTransport> {
  return core.config.email.transport === "smtp" ? await smtpTransport(core) : outboxTransport(core);
}
