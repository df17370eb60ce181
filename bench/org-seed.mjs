// Issue 43's organization of 10,000 members (org-members-10k), written straight into the
// store: the members are tenants of the app with a membership row each, joined one
// millisecond apart after the owner, as invites accepted one by one would leave them.
import { connect } from "./pg-clone-seed.mjs";

const memberRows = ({ orgId, count }) => {
  const at = Date.now() - 3_600_000;
  const tag = orgId.slice(-6);
  return Array.from({ length: count }, (_, i) => ({ id: `tnt_m${tag}${String(i).padStart(6, "0")}`, email: `member${i}-${tag}@bench.invalid`, at: at + i }));
};

/** `count` members (role member) of `orgId`, on SQLite. */
export function sqliteSeedMembers(db, { appId, orgId, count }) {
  const started = Date.now();
  const tenant = db.prepare("INSERT INTO tenants (id, app_id, email, locale, created_at) VALUES (?, ?, ?, 'en', ?)");
  const member = db.prepare("INSERT INTO org_members (org_id, tenant_id, app_id, role, joined_at) VALUES (?, ?, ?, 'member', ?)");
  db.transaction(() => {
    for (const r of memberRows({ orgId, count })) {
      tenant.run(r.id, appId, r.email, r.at);
      member.run(orgId, r.id, appId, r.at);
    }
  })();
  db.pragma("wal_checkpoint(TRUNCATE)");
  return { rows: count, ms: Date.now() - started };
}

/** The same on PostgreSQL, in one transaction. */
export async function pgSeedMembers(url, { appId, orgId, count }) {
  const started = Date.now();
  const sql = connect(url);
  try {
    const rows = memberRows({ orgId, count });
    await sql.begin(async (tx) => {
      await tx`INSERT INTO tenants (id, app_id, email, locale, created_at)
        SELECT id, ${appId}, email, 'en', at FROM unnest(${rows.map((r) => r.id)}::text[], ${rows.map((r) => r.email)}::text[], ${rows.map((r) => r.at)}::bigint[]) AS r(id, email, at)`;
      await tx`INSERT INTO org_members (org_id, tenant_id, app_id, role, joined_at)
        SELECT ${orgId}, id, ${appId}, 'member', at FROM unnest(${rows.map((r) => r.id)}::text[], ${rows.map((r) => r.at)}::bigint[]) AS r(id, at)`;
    });
    await sql`ANALYZE org_members`;
  } finally {
    await sql.end();
  }
  return { rows: count, ms: Date.now() - started };
}
