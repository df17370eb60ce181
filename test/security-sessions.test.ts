import { describe, expect, it } from "vitest";
import { expectError, signupTenant, startBackend } from "./_helpers.ts";
import { PASSWORD, refresh } from "./_auth.ts";
import { hashToken, newToken } from "../src/crypto/random.ts";
import { storeRows } from "./_store.ts";

describe("refresh rotation is idempotent inside the grace window (review item 2)", () => {
  it("a repeat of the same refresh token within the window returns the successor already issued, never a sibling chain", async () => {
    const t = await startBackend();
    const tenant = await signupTenant(t);
    const first = await refresh(t, tenant.refreshToken);
    expect(first.status, first.text).toBe(200);
    t.clock.advance(2000);
    const repeat = await refresh(t, tenant.refreshToken);
    expect(repeat.status, repeat.text).toBe(200);
    expect(repeat.body.refreshToken).toBe(first.body.refreshToken);
    expect(repeat.headers.get("cache-control")).toBe("no-store");
    const tokens = await storeRows(t.backend).value("SELECT COUNT(*) FROM refresh_tokens r JOIN sessions s ON s.id = r.session_id WHERE s.tenant_id = ?", tenant.id);
    expect(tokens).toBe(2);
  });

  it("a thief replaying within the window gets no chain of their own: both parties hold one token, the next reuse ends the session", async () => {
    const t = await startBackend();
    const tenant = await signupTenant(t);
    const owner = await refresh(t, tenant.refreshToken);
    const thief = await refresh(t, tenant.refreshToken);
    expect(thief.body.refreshToken).toBe(owner.body.refreshToken);
    // The owner moves on; the thief's copy is now a rotated token used again: reuse.
    const ownerNext = await refresh(t, owner.body.refreshToken);
    expect(ownerNext.status).toBe(200);
    t.clock.advance(10_000);
    expectError(await refresh(t, thief.body.refreshToken), 401, "session_ended");
    expectError(await refresh(t, ownerNext.body.refreshToken), 401, "session_ended");
  });

  it("a repeat after the successor was itself rotated is reuse, even inside the window", async () => {
    const t = await startBackend();
    const tenant = await signupTenant(t);
    const a = await refresh(t, tenant.refreshToken);
    expect((await refresh(t, a.body.refreshToken)).status).toBe(200);
    expectError(await refresh(t, tenant.refreshToken), 401, "session_ended");
  });

  it("no issued refresh token is kept, not even sealed: the successor a repeat gets is derived again from the old token", async () => {
    const t = await startBackend();
    const tenant = await signupTenant(t);
    const first = await refresh(t, tenant.refreshToken);
    const rows = await storeRows(t.backend).all<{ successor_hash: string | null; successor_sealed: string | null }>(
      "SELECT r.successor_hash, r.successor_sealed FROM refresh_tokens r JOIN sessions s ON s.id = r.session_id WHERE s.tenant_id = ? ORDER BY r.created_at, r.rotated_at IS NULL",
      tenant.id,
    );
    expect(rows.map((r) => r.successor_sealed)).toEqual([null, null]);
    expect(rows[0]!.successor_hash).toBe(hashToken(first.body.refreshToken));
    // Another session's chain is its own.
    const again = await t.request("POST", "/api/v1/auth/login", { key: t.app.publishableKey, body: { email: tenant.email, password: PASSWORD } });
    expect((await refresh(t, again.body.refreshToken)).body.refreshToken).not.toBe(first.body.refreshToken);
  });

  it("a rotation stored by an earlier version, with its successor sealed, still hands that successor out within the window", async () => {
    const t = await startBackend();
    const tenant = await signupTenant(t);
    const rows = storeRows(t.backend);
    // What version 0.1 left: the old token rotated to a random successor, kept sealed.
    const successor = newToken("rt");
    const sessionId = await rows.value<string>("SELECT id FROM sessions WHERE tenant_id = ?", tenant.id);
    await rows.run("INSERT INTO refresh_tokens (token_hash, session_id, created_at) VALUES (?, ?, ?)", hashToken(successor), sessionId, t.clock());
    await rows.run(
      "UPDATE refresh_tokens SET rotated_at = ?, successor_hash = ?, successor_sealed = ? WHERE token_hash = ?",
      t.clock(),
      hashToken(successor),
      t.backend.core.secrets.seal(successor, t.app.id),
      hashToken(tenant.refreshToken),
    );
    t.clock.advance(1000);
    const repeat = await refresh(t, tenant.refreshToken);
    expect(repeat.status, repeat.text).toBe(200);
    expect(repeat.body.refreshToken).toBe(successor);
    expect((await refresh(t, successor)).status).toBe(200);
  });

  it("the window is a few seconds by default (5 s), and configurable", async () => {
    const t = await startBackend();
    const tenant = await signupTenant(t);
    await refresh(t, tenant.refreshToken);
    t.clock.advance(6000);
    expectError(await refresh(t, tenant.refreshToken), 401, "session_ended");

    const wide = await startBackend({ refreshReuseGraceSeconds: 30 });
    const other = await signupTenant(wide);
    const r = await refresh(wide, other.refreshToken);
    wide.clock.advance(20_000);
    expect((await refresh(wide, other.refreshToken)).body.refreshToken).toBe(r.body.refreshToken);
    await expect(startBackend({ refreshReuseGraceSeconds: 600 })).rejects.toThrow(/refreshReuseGraceSeconds/);
  });
});
