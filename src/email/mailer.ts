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
  /** Messages queued and not yet handed to the transport. */
  readonly pending: number;
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
      core.metrics?.email("sent");
    } catch (e) {
      core.metrics?.email("failed");
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
    get pending() {
      return pending.size;
    },
  };
  core.onClose(async () => {
    await mailer.idle();
    if (transport) (await transport.catch(() => undefined))?.close();
  });
  return mailer;
}

/** Messages the core's mailer holds now (0 before its first). */
export const queuedMail = (core: Core): number => mailers.get(core)?.pending ?? 0;

/** The core's mailer, created on first use (so a CLI command that sends none opens no SMTP connection). */
export function mailerFor(core: Core): Mailer {
  let mailer = mailers.get(core);
  if (!mailer) {
    mailer = createMailer(core);
    mailers.set(core, mailer);
  }
  return mailer;
}
