/**
 * Names tenantd gave its per-field expression indexes on `records` before schema 17
 * (declared `records_f_`, automatic `records_a_`). Those indexes now live beside the table
 * (record-field-index.ts); the old ones are dropped at startup. Nothing else is ever dropped.
 */
export const LEGACY_INDEX_NAME = /^records_[fa]_[0-9a-f]{12}_[0-9a-f]{20}$/;
