import type { SqliteDb } from "./connection.ts";
import type { OutboxMessage } from "../types.ts";

interface RawMessage {
  id: string;
  app_id: string;
  tenant_id: string | null;
  kind: string;
  locale: string;
  to_address: string;
  subject: string;
  text_body: string;
  html_body: string;
  link: string | null;
  created_at: number;
}

const toMessage = (r: RawMessage): OutboxMessage => ({
  id: r.id,
  appId: r.app_id,
  tenantId: r.tenant_id,
  kind: r.kind,
  locale: r.locale,
  to: r.to_address,
  subject: r.subject,
  text: r.text_body,
  html: r.html_body,
  link: r.link,
  createdAt: r.created_at,
});

export type OutboxRepo = ReturnType<typeof createOutboxRepo>;

/** The development outbox: every email tenantd would have sent, newest first. */
export function createOutboxRepo(db: SqliteDb) {
  const q = {
    insert: db.prepare<[string, string, string | null, string, string, string, string, string, string, string | null, number]>(
      "INSERT INTO outbox (id, app_id, tenant_id, kind, locale, to_address, subject, text_body, html_body, link, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    ),
    listApp: db.prepare<[string, number], RawMessage>("SELECT * FROM outbox WHERE app_id = ? ORDER BY created_at DESC, rowid DESC LIMIT ?"),
    listAll: db.prepare<[number], RawMessage>("SELECT * FROM outbox ORDER BY created_at DESC, rowid DESC LIMIT ?"),
  };
  return {
    async insert(m: OutboxMessage): Promise<void> {
      q.insert.run(m.id, m.appId, m.tenantId, m.kind, m.locale, m.to, m.subject, m.text, m.html, m.link, m.createdAt);
    },
    /** Newest first; one app's messages when `appId` is given. */
    async list(opts: { appId?: string; limit: number }): Promise<OutboxMessage[]> {
      return (opts.appId ? q.listApp.all(opts.appId, opts.limit) : q.listAll.all(opts.limit)).map(toMessage);
    },
  };
}
