import type { SqliteDb } from "./connection.ts";
import type { MfaRepository } from "../repositories.ts";
import type { AuthChallengeKind, AuthChallengeRow, ChallengeOutcome, PasskeyRow, SessionAuth, TotpRow } from "../types.ts";
import { challengeOutcome } from "../shared.ts";

const TOTP = "tenant_id AS tenantId, app_id AS appId, secret_sealed AS secretSealed, confirmed_at AS confirmedAt, last_step AS lastStep, created_at AS createdAt";
const PASSKEY = `id, app_id AS appId, tenant_id AS tenantId, credential_id AS credentialId, public_key AS publicKey, counter, transports, name,
  created_at AS createdAt, last_used_at AS lastUsedAt`;
const CHALLENGE = "hash, app_id AS appId, tenant_id AS tenantId, kind, data, attempts, created_at AS createdAt, expires_at AS expiresAt, used_at AS usedAt";

export function createMfaRepo(db: SqliteDb): MfaRepository {
  const q = {
    totp: db.prepare<[string, string], TotpRow>(`SELECT ${TOTP} FROM tenant_totp WHERE app_id = ? AND tenant_id = ?`),
    startTotp: db.prepare<[string, string, string, number]>(
      `INSERT INTO tenant_totp (tenant_id, app_id, secret_sealed, created_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (tenant_id) DO UPDATE SET secret_sealed = excluded.secret_sealed, created_at = excluded.created_at, last_step = NULL
       WHERE tenant_totp.confirmed_at IS NULL`,
    ),
    confirmTotp: db.prepare<[number, number, string, string]>(
      "UPDATE tenant_totp SET confirmed_at = ?, last_step = ? WHERE app_id = ? AND tenant_id = ? AND confirmed_at IS NULL",
    ),
    useStep: db.prepare<[number, string, string, number]>(
      "UPDATE tenant_totp SET last_step = ? WHERE app_id = ? AND tenant_id = ? AND confirmed_at IS NOT NULL AND (last_step IS NULL OR last_step < ?)",
    ),
    disableTotp: db.prepare<[string, string]>("DELETE FROM tenant_totp WHERE app_id = ? AND tenant_id = ?"),
    dropCodes: db.prepare<[string]>("DELETE FROM recovery_codes WHERE tenant_id = ?"),
    insertCode: db.prepare<[string, string, number]>("INSERT INTO recovery_codes (tenant_id, code_hash, created_at) VALUES (?, ?, ?)"),
    useCode: db.prepare<[number, string, string]>("UPDATE recovery_codes SET used_at = ? WHERE tenant_id = ? AND code_hash = ? AND used_at IS NULL"),
    codesLeft: db.prepare<[string], number>("SELECT COUNT(*) FROM recovery_codes WHERE tenant_id = ? AND used_at IS NULL").pluck(),
    insertChallenge: db.prepare<[string, string, string | null, string, string, number, number]>(
      "INSERT INTO auth_challenges (hash, app_id, tenant_id, kind, data, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
    ),
    challenge: db.prepare<[string, string, string], AuthChallengeRow>(`SELECT ${CHALLENGE} FROM auth_challenges WHERE hash = ? AND app_id = ? AND kind = ?`),
    useChallenge: db.prepare<[number, string]>("UPDATE auth_challenges SET used_at = ? WHERE hash = ? AND used_at IS NULL"),
    failChallenge: db.prepare<[string], number>("UPDATE auth_challenges SET attempts = attempts + 1 WHERE hash = ? RETURNING attempts").pluck(),
    purgeChallenges: db.prepare<[number]>("DELETE FROM auth_challenges WHERE expires_at < ?"),
    insertPasskey: db.prepare<[string, string, string, string, string, number, string | null, string, number]>(
      `INSERT INTO passkeys (id, app_id, tenant_id, credential_id, public_key, counter, transports, name, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    passkeys: db.prepare<[string, string], PasskeyRow>(`SELECT ${PASSKEY} FROM passkeys WHERE app_id = ? AND tenant_id = ? ORDER BY created_at, id`),
    passkeyByCredential: db.prepare<[string, string], PasskeyRow>(`SELECT ${PASSKEY} FROM passkeys WHERE app_id = ? AND credential_id = ?`),
    renamePasskey: db.prepare<[string, string, string, string]>("UPDATE passkeys SET name = ? WHERE app_id = ? AND tenant_id = ? AND id = ?"),
    removePasskey: db.prepare<[string, string, string]>("DELETE FROM passkeys WHERE app_id = ? AND tenant_id = ? AND id = ?"),
    usePasskey: db.prepare<[number, number, string, number]>("UPDATE passkeys SET counter = ?, last_used_at = ? WHERE id = ? AND counter = ?"),
    sessionAuth: db.prepare<[string], SessionAuth>(
      "SELECT tenant_id AS tenantId, COALESCE(authenticated_at, created_at) AS authenticatedAt, auth_methods AS methods FROM sessions WHERE id = ?",
    ),
    markAuthenticated: db.prepare<[number, string, string]>("UPDATE sessions SET authenticated_at = ?, auth_methods = ? WHERE id = ?"),
    setPassword: db.prepare<[string, string, string]>("UPDATE tenants SET password_hash = ? WHERE app_id = ? AND id = ?"),
    endOthers: db.prepare<[number, string, string, string]>(
      "UPDATE sessions SET ended_at = ?, end_reason = 'password_changed' WHERE app_id = ? AND tenant_id = ? AND id <> ? AND ended_at IS NULL",
    ),
  };
  const changePassword = db.transaction((appId: string, tenantId: string, hash: string, keep: string, now: number) => {
    q.setPassword.run(hash, appId, tenantId);
    q.endOthers.run(now, appId, tenantId, keep);
  });

  const replaceCodes = (tenantId: string, hashes: string[], now: number) => {
    q.dropCodes.run(tenantId);
    for (const h of hashes) q.insertCode.run(tenantId, h, now);
  };
  const confirm = db.transaction((appId: string, tenantId: string, step: number, hashes: string[], now: number) => {
    if (q.confirmTotp.run(now, step, appId, tenantId).changes === 0) return false;
    replaceCodes(tenantId, hashes, now);
    return true;
  });
  const disable = db.transaction((appId: string, tenantId: string) => {
    const gone = q.disableTotp.run(appId, tenantId).changes > 0;
    if (gone) q.dropCodes.run(tenantId);
    return gone;
  });
  const useCode = db.transaction((tenantId: string, hash: string, now: number) =>
    q.useCode.run(now, tenantId, hash).changes === 0 ? null : (q.codesLeft.get(tenantId) ?? 0),
  );
  const consume = db.transaction((hash: string, appId: string, kind: AuthChallengeKind, now: number): ChallengeOutcome => {
    const outcome = challengeOutcome(q.challenge.get(hash, appId, kind), now);
    if (outcome.ok) q.useChallenge.run(now, hash);
    return outcome;
  });

  return {
    totp: async (appId, tenantId) => q.totp.get(appId, tenantId),
    startTotp: async (r) => q.startTotp.run(r.tenantId, r.appId, r.secretSealed, r.createdAt).changes > 0,
    confirmTotp: async (appId, tenantId, step, hashes, now) => confirm.immediate(appId, tenantId, step, hashes, now),
    useTotpStep: async (appId, tenantId, step) => q.useStep.run(step, appId, tenantId, step).changes > 0,
    disableTotp: async (appId, tenantId) => disable.immediate(appId, tenantId),
    replaceRecoveryCodes: async (tenantId, hashes, now) => db.transaction(replaceCodes).immediate(tenantId, hashes, now),
    useRecoveryCode: async (tenantId, hash, now) => useCode.immediate(tenantId, hash, now),
    recoveryCodesLeft: async (tenantId) => q.codesLeft.get(tenantId) ?? 0,

    createChallenge: async (r) => void q.insertChallenge.run(r.hash, r.appId, r.tenantId, r.kind, r.data, r.createdAt, r.expiresAt),
    peekChallenge: async (hash, appId, kind, now) => challengeOutcome(q.challenge.get(hash, appId, kind), now),
    consumeChallenge: async (hash, appId, kind, now) => consume.immediate(hash, appId, kind, now),
    async consumePasskeyChallenge(hash, appId, kind, now, credentialId) {
      const outcome = consume.immediate(hash, appId, kind, now);
      return { outcome, passkey: outcome.ok ? q.passkeyByCredential.get(appId, credentialId) : undefined };
    },
    failChallenge: async (hash) => q.failChallenge.get(hash) ?? 0,
    purgeChallenges: async (before) => q.purgeChallenges.run(before).changes,

    insertPasskey: async (p) => void q.insertPasskey.run(p.id, p.appId, p.tenantId, p.credentialId, p.publicKey, p.counter, p.transports, p.name, p.createdAt),
    passkeys: async (appId, tenantId) => q.passkeys.all(appId, tenantId),
    passkeyByCredential: async (appId, credentialId) => q.passkeyByCredential.get(appId, credentialId),
    renamePasskey: async (appId, tenantId, id, name) => q.renamePasskey.run(name, appId, tenantId, id).changes > 0,
    removePasskey: async (appId, tenantId, id) => q.removePasskey.run(appId, tenantId, id).changes > 0,
    usePasskey: async (id, oldCounter, newCounter, at) => q.usePasskey.run(newCounter, at, id, oldCounter).changes > 0,

    changePassword: async (appId, tenantId, hash, keep, now) => changePassword.immediate(appId, tenantId, hash, keep, now),
    sessionAuth: async (sessionId) => q.sessionAuth.get(sessionId),
    markAuthenticated: async (sessionId, at, methods) => void q.markAuthenticated.run(at, methods, sessionId),
  };
}
