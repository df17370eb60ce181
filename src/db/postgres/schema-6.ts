// Migration 6: the devices that signed in to an account, so the sign-in backoff never holds
// the right password back from them (auth/login-backoff.ts). UNLOGGED like login_failures:
// a crash only forgets which devices were known, and each is known again at its next sign-in.
export const knownDevicesSchema = `
CREATE UNLOGGED TABLE login_devices (
  key TEXT PRIMARY KEY,
  until_at BIGINT NOT NULL
);
CREATE INDEX login_devices_until ON login_devices(until_at);
`;
