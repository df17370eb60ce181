// Migration 21: the bytes of record data each tenant stores, kept as a counter for the byte
// quota (settings.quotas.recordBytes) instead of summed on each write. Triggers keep it, so
// every writer (the API, the dashboard's record editor, a store copy, a cascade) moves it.
// A tenant deleted with its records takes its row with it; the triggers then update nothing.
export const recordBytesSchema = `
CREATE TABLE record_bytes (
  tenant_id TEXT PRIMARY KEY REFERENCES tenants(id) ON DELETE CASCADE,
  bytes INTEGER NOT NULL
) WITHOUT ROWID;
INSERT INTO record_bytes (tenant_id, bytes) SELECT tenant_id, SUM(octet_length(data)) FROM records GROUP BY tenant_id;
CREATE TRIGGER record_bytes_added AFTER INSERT ON records BEGIN
  INSERT INTO record_bytes (tenant_id, bytes) VALUES (NEW.tenant_id, octet_length(NEW.data))
    ON CONFLICT (tenant_id) DO UPDATE SET bytes = bytes + excluded.bytes;
END;
CREATE TRIGGER record_bytes_removed AFTER DELETE ON records BEGIN
  UPDATE record_bytes SET bytes = bytes - octet_length(OLD.data) WHERE tenant_id = OLD.tenant_id;
END;
CREATE TRIGGER record_bytes_changed AFTER UPDATE OF data ON records WHEN OLD.tenant_id = NEW.tenant_id AND octet_length(NEW.data) <> octet_length(OLD.data) BEGIN
  UPDATE record_bytes SET bytes = bytes + octet_length(NEW.data) - octet_length(OLD.data) WHERE tenant_id = NEW.tenant_id;
END;
CREATE TRIGGER record_bytes_moved AFTER UPDATE OF tenant_id ON records WHEN OLD.tenant_id <> NEW.tenant_id BEGIN
  UPDATE record_bytes SET bytes = bytes - octet_length(OLD.data) WHERE tenant_id = OLD.tenant_id;
  INSERT INTO record_bytes (tenant_id, bytes) VALUES (NEW.tenant_id, octet_length(NEW.data))
    ON CONFLICT (tenant_id) DO UPDATE SET bytes = bytes + excluded.bytes;
END;
`;
