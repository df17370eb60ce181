import type { SqliteDb } from "./connection.ts";
import type { DeveloperRow } from "../types.ts";

interface RawDeveloper {
  id: string;
  email: string;
  password_hash: string;
  created_at: number;
}

const toDeveloper = (r: RawDeveloper): DeveloperRow => ({
  id: r.id,
  email: r.email,
  passwordHash: r.password_hash,
  createdAt: r.created_at,
});

export type DevelopersRepo = ReturnType<typeof createDevelopersRepo>;

export function createDevelopersRepo(db: SqliteDb) {
  const q = {
    insert: db.prepare<[string, string, string, number]>("INSERT INTO developers (id, email, password_hash, created_at) VALUES (?, ?, ?, ?)"),
    byEmail: db.prepare<[string], RawDeveloper>("SELECT * FROM developers WHERE email = ?"),
    byId: db.prepare<[string], RawDeveloper>("SELECT * FROM developers WHERE id = ?"),
    all: db.prepare<[], RawDeveloper>("SELECT * FROM developers ORDER BY created_at"),
    setPassword: db.prepare<[string, string]>("UPDATE developers SET password_hash = ? WHERE id = ?"),
    insertSession: db.prepare<[string, string, number, number]>(
      "INSERT INTO developer_sessions (token_hash, developer_id, created_at, expires_at) VALUES (?, ?, ?, ?)",
    ),
    session: db.prepare<[string, number], RawDeveloper>(
      "SELECT d.* FROM developer_sessions s JOIN developers d ON d.id = s.developer_id WHERE s.token_hash = ? AND s.expires_at > ?",
    ),
    deleteSession: db.prepare<[string]>("DELETE FROM developer_sessions WHERE token_hash = ?"),
    deleteSessionsOf: db.prepare<[string]>("DELETE FROM developer_sessions WHERE developer_id = ?"),
    purgeExpired: db.prepare<[number]>("DELETE FROM developer_sessions WHERE expires_at <= ?"),
    isOperator: db.prepare<[string], { one: number }>("SELECT 1 AS one FROM backup_operators WHERE developer_id = ?"),
    grantOperator: db.prepare<[string, number]>("INSERT INTO backup_operators (developer_id, granted_at) VALUES (?, ?) ON CONFLICT (developer_id) DO NOTHING"),
    revokeOperator: db.prepare<[string]>("DELETE FROM backup_operators WHERE developer_id = ?"),
  };
  return {
    async isBackupOperator(id: string): Promise<boolean> {
      return q.isOperator.get(id) !== undefined;
    },
    async setBackupOperator(id: string, on: boolean, now: number): Promise<void> {
      if (on) q.grantOperator.run(id, now);
      else q.revokeOperator.run(id);
    },
    async insert(d: DeveloperRow): Promise<void> {
      q.insert.run(d.id, d.email, d.passwordHash, d.createdAt);
    },
    async findByEmail(email: string): Promise<DeveloperRow | undefined> {
      const r = q.byEmail.get(email);
      return r && toDeveloper(r);
    },
    async findById(id: string): Promise<DeveloperRow | undefined> {
      const r = q.byId.get(id);
      return r && toDeveloper(r);
    },
    async list(): Promise<DeveloperRow[]> {
      return q.all.all().map(toDeveloper);
    },
    /** Sets a new password and ends every session of the developer. */
    async setPassword(id: string, passwordHash: string): Promise<void> {
      db.transaction(() => {
        q.setPassword.run(passwordHash, id);
        q.deleteSessionsOf.run(id);
      }).immediate();
    },
    async createSession(tokenHash: string, developerId: string, now: number, expiresAt: number): Promise<void> {
      q.purgeExpired.run(now);
      q.insertSession.run(tokenHash, developerId, now, expiresAt);
    },
    async findBySession(tokenHash: string, now: number): Promise<DeveloperRow | undefined> {
      const r = q.session.get(tokenHash, now);
      return r && toDeveloper(r);
    },
    async endSession(tokenHash: string): Promise<void> {
      q.deleteSession.run(tokenHash);
    },
  };
}
