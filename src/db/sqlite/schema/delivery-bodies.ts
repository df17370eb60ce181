// The delivery log keeps the body each delivery sent, sealed with the server key like the
// queued event it came from (it carries the tenant's email and, for a resend, a token).
// The age index serves the hourly pruning (src/webhooks/retention.ts).
export const deliveryBodiesSchema = `
ALTER TABLE webhook_deliveries ADD COLUMN body_sealed TEXT;
CREATE INDEX webhook_deliveries_age ON webhook_deliveries(created_at);
CREATE INDEX webhook_deliveries_body_age ON webhook_deliveries(created_at) WHERE body_sealed IS NOT NULL;
`;
