ALTER TABLE wallets
    DROP CONSTRAINT wallets_key_held,
    DROP CONSTRAINT wallets_signer_known;

--bun:split

ALTER TABLE wallets
    DROP COLUMN exported_at,
    DROP COLUMN key_ref,
    DROP COLUMN signer,
    ALTER COLUMN secret_key_id SET NOT NULL,
    ALTER COLUMN secret_sealed SET NOT NULL;
