import type { PgSql } from "./connection.ts";
import type { DevelopersRepository } from "../repositories.ts";
import type { DeveloperRow } from "../types.ts";

export function createPgDevelopersRepo(sql: PgSql): DevelopersRepository {
  return {
    async isBackupOperator(id) {
      return (await sql`SELECT 1 FROM backup_operators WHERE developer_id = ${id}`).length > 0;
    },
    async setBackupOperator(id, on, now) {
      if (on) await sql`INSERT INTO backup_operators (developer_id, granted_at) VALUES (${id}, ${now}) ON CONFLICT (developer_id) DO NOTHING`;
      else await sql`DELETE FROM backup_operators WHERE developer_id = ${id}`;
    },
    async insert(d) {
      await sql`INSERT INTO developers (id, email, password_hash, created_at) VALUES (${d.id}, ${d.email}, ${d.passwordHash}, ${d.createdAt})`;
    },
    async findByEmail(email) {
      const [r] = await sql<DeveloperRow[]>`SELECT id, email, password_hash, created_at FROM developers WHERE email = ${email}`;
      return r;
    },
    async findById(id) {
      const [r] = await sql<DeveloperRow[]>`SELECT id, email, password_hash, created_at FROM developers WHERE id = ${id}`;
      return r;
    },
    async list() {
      return [...(await sql<DeveloperRow[]>`SELECT id, email, password_hash, created_at FROM developers ORDER BY created_at`)];
    },
    async setPassword(id, passwordHash) {
      await sql.begin(async (tx) => {
        await tx`UPDATE developers SET password_hash = ${passwordHash} WHERE id = ${id}`;
        await tx`DELETE FROM developer_sessions WHERE developer_id = ${id}`;
      });
    },
    async createSession(tokenHash, developerId, now, expiresAt) {
      await sql`DELETE FROM developer_sessions WHERE expires_at <= ${now}`;
      await sql`INSERT INTO developer_sessions (token_hash, developer_id, created_at, expires_at) VALUES (${tokenHash}, ${developerId}, ${now}, ${expiresAt})`;
    },
    async findBySession(tokenHash, now) {
      const [r] = await sql<DeveloperRow[]>`
        SELECT d.id, d.email, d.password_hash, d.created_at FROM developer_sessions s JOIN developers d ON d.id = s.developer_id
        WHERE s.token_hash = ${tokenHash} AND s.expires_at > ${now}`;
      return r;
    },
    async endSession(tokenHash) {
      await sql`DELETE FROM developer_sessions WHERE token_hash = ${tokenHash}`;
    },
  };
}
