import { createTransport } from "nodemailer";
import { newId } from "../crypto/random.ts";
import type { Core } from "../core.ts";

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
function smtpTransport(core: Core): EmailTransport {
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
  return {
    async send(m) {
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
      // "url" rather than "link…token" so the logger's secret-field filter keeps it visible: it is the point of the outbox.
      core.log.info(`email (outbox) to ${m.to}: ${m.subject}`, { url: m.link });
    },
    close() {},
  };
}

export function createEmailTransport(core: Core): EmailTransport {
  return core.config.email.transport === "smtp" ? smtpTransport(core) : outboxTransport(core);
}
