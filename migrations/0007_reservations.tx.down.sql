ALTER TABLE transactions DROP COLUMN signed_at, DROP COLUMN refused_at;
