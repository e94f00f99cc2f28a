import { type Kysely, sql } from 'kysely';

// Frozen in time: this file must not import application code.

export async function up(db: Kysely<any>): Promise<void> {
  // A DCR client is shared only with registrations of the same client name
  // and redirect-URI set (RFC 8252 §8.6: one app must not get another's
  // client and consents). The key becomes sha256(set key || '\n' || name),
  // computed here for existing clients, so an exact repeat of an earlier
  // registration still finds its client.
  await sql`ALTER TABLE oauth_clients RENAME COLUMN redirect_set_key TO registration_key`.execute(db);
  await sql`ALTER INDEX oauth_clients_dcr_redirect_set_key RENAME TO oauth_clients_dcr_registration_key`.execute(db);
  await sql`ALTER TABLE oauth_clients RENAME CONSTRAINT oauth_clients_dcr_has_redirect_set_key TO oauth_clients_dcr_has_registration_key`.execute(
    db,
  );
  await sql`UPDATE oauth_clients
    SET registration_key = encode(sha256(convert_to(registration_key || E'\n' || name, 'UTF8')), 'hex')
    WHERE kind = 'dcr'`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  // The set-only keys cannot be recovered from the hashes: the older code
  // finds no client for a set and creates one (once per set).
  await sql`ALTER TABLE oauth_clients RENAME CONSTRAINT oauth_clients_dcr_has_registration_key TO oauth_clients_dcr_has_redirect_set_key`.execute(
    db,
  );
  await sql`ALTER INDEX oauth_clients_dcr_registration_key RENAME TO oauth_clients_dcr_redirect_set_key`.execute(db);
  await sql`ALTER TABLE oauth_clients RENAME COLUMN registration_key TO redirect_set_key`.execute(db);
}
