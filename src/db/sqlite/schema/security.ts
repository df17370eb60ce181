export const securitySchema = `
-- Idempotent refresh rotation: a rotated token remembers its successor (hash to find it,
-- sealed to hand it out again to a concurrent refresh within the grace window).
ALTER TABLE refresh_tokens ADD COLUMN successor_hash TEXT;
ALTER TABLE refresh_tokens ADD COLUMN successor_sealed TEXT;

-- An account being deleted: its writes are refused while its data is removed.
ALTER TABLE tenants ADD COLUMN deleting_at INTEGER;
`;
