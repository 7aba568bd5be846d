-- Where each wallet's key lives. 'local' is the sealed envelope (the
-- secret in secret_sealed, opened by the worker's master key); 'pkcs11',
-- 'vault' and 'awskms' keep a non-exportable key outside the service and
-- name it by key_ref (a token object's label, a transit key's name, a KMS
-- key id), with no secret in this row. A fleet may mix them: the default
-- for new wallets can change without stranding an old one.
-- exported_at marks, for good, a wallet whose secret an owner exported.

ALTER TABLE wallets
    ADD COLUMN signer text NOT NULL DEFAULT 'local',
    ADD COLUMN key_ref text,
    ADD COLUMN exported_at timestamptz,
    ALTER COLUMN secret_key_id DROP NOT NULL,
    ALTER COLUMN secret_sealed DROP NOT NULL;

--bun:split

ALTER TABLE wallets
    ADD CONSTRAINT wallets_signer_known CHECK (signer IN ('local', 'pkcs11', 'vault', 'awskms')),
    ADD CONSTRAINT wallets_key_held CHECK (
        CASE WHEN signer = 'local'
            THEN secret_sealed IS NOT NULL AND secret_key_id IS NOT NULL AND key_ref IS NULL
            ELSE secret_sealed IS NULL AND secret_key_id IS NULL AND key_ref IS NOT NULL
        END);
