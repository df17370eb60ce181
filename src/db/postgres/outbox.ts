import type { PgSql } from "./connection.ts";
import type { OutboxRepository } from "../repositories.ts";
import type { OutboxMessage } from "../types.ts";

export function createPgOutboxRepo(sql: PgSql): OutboxRepository {
  return {
    async insert(m) {
      await sql`INSERT INTO outbox (id, app_id, tenant_id, kind, locale, to_address, subject, text_body, html_body, link, created_at)
        VALUES (${m.id}, ${m.appId}, ${m.tenantId}, ${m.kind}, ${m.locale}, ${m.to}, ${m.subject}, ${m.text}, ${m.html}, ${m.link}, ${m.createdAt})`;
    },
    async list(opts) {
      const rows = opts.appId
        ? await sql<OutboxMessage[]>`SELECT id, app_id, tenant_id, kind, locale, to_address AS "to", subject, text_body AS text, html_body AS html, link, created_at FROM outbox WHERE app_id = ${opts.appId} ORDER BY created_at DESC, seq DESC LIMIT ${opts.limit}`
        : await sql<OutboxMessage[]>`SELECT id, app_id, tenant_id, kind, locale, to_address AS "to", subject, text_body AS text, html_body AS html, link, created_at FROM outbox ORDER BY created_at DESC, seq DESC LIMIT ${opts.limit}`;
      return [...rows];
    },
  };
}
