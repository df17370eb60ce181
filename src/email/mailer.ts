import type { Core } from "../core.ts";
import { createEmailTransport, type EmailTransport, type OutgoingEmail } from "./transport.ts";
import { carryRequestId, currentRequestId } from "../log.ts";

export interface Mailer {
  /**
   * Sends after the current request has answered. Never throws and never delays the
   * caller: building or delivering the message may fail, and that is logged.
   */
  queue(build: () => OutgoingEmail | Promise<OutgoingEmail>): void;
  /** Resolves when every queued message has been handed to the transport (or failed). */
  idle(): Promise<void>;
}

const mailers = new WeakMap<Core, Mailer>();

function createMailer(core: Core): Mailer {
  let transport: Promise<EmailTransport> | undefined;
  const pending = new Set<Promise<void>>();

  const deliver = async (build: () => OutgoingEmail | Promise<OutgoingEmail>) => {
    let to = "(unknown)";
    try {
      const message = await build();
      to = message.to;
      transport ??= createEmailTransport(core);
      await (await transport).send(message);
    } catch (e) {
      core.log.warn("email not sent", { to, transport: core.config.email.transport, error: e instanceof Error ? e.message : String(e) });
    }
  };

  const mailer: Mailer = {
    queue(build) {
      // The mail is the request's work: its lines carry the request's id, after the reply too.
      const requestId = currentRequestId();
      const send = () => (requestId === undefined ? deliver(build) : carryRequestId(requestId, () => deliver(build)));
      const job = new Promise<void>((resolve) => setImmediate(() => void send().finally(resolve)));
      pending.add(job);
      void job.finally(() => pending.delete(job));
    },
    async idle() {
      while (pending.size > 0) await Promise.all(pending);
    },
  };
  core.onClose(async () => {
    await mailer.idle();
    if (transport) (await transport.catch(() => undefined))?.close();
  });
  return mailer;
}

/** The core's mailer, created on first use (so a CLI command that sends none opens no SMTP connection). */
export function mailerFor(core: Core): Mailer {
  let mailer = mailers.get(core);
  if (!mailer) {
    mailer = createMailer(core);
    mailers.set(core, mailer);
  }
  return mailer;
}
