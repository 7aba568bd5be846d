ALTER TABLE unexplained_outflows DROP COLUMN authority;

--bun:split

DELETE FROM unexplained_outflows WHERE asset NOT IN ('usdc', 'sol');

--bun:split

ALTER TABLE unexplained_outflows DROP CONSTRAINT unexplained_outflows_asset_check,
    ADD CONSTRAINT unexplained_outflows_asset_check CHECK (asset IN ('usdc', 'sol'));

--bun:split

DELETE FROM balance_snapshots WHERE asset NOT IN ('usdc', 'sol');

--bun:split

ALTER TABLE balance_snapshots DROP CONSTRAINT balance_snapshots_asset_check,
    ADD CONSTRAINT balance_snapshots_asset_check CHECK (asset IN ('usdc', 'sol'));

--bun:split

DELETE FROM ledger WHERE asset NOT IN ('usdc', 'sol');

--bun:split

ALTER TABLE ledger DROP CONSTRAINT ledger_asset_check,
    ADD CONSTRAINT ledger_asset_check CHECK (asset IN ('usdc', 'sol'));

--bun:split

DELETE FROM watched_accounts WHERE asset NOT IN ('usdc', 'sol');

--bun:split

ALTER TABLE watched_accounts DROP CONSTRAINT watched_accounts_asset_check,
    ADD CONSTRAINT watched_accounts_asset_check CHECK (asset IN ('usdc', 'sol'));

--bun:split

DELETE FROM deposits WHERE asset NOT IN ('usdc', 'sol');

--bun:split

ALTER TABLE deposits DROP CONSTRAINT deposits_asset_check,
    ADD CONSTRAINT deposits_asset_check CHECK (asset IN ('usdc', 'sol'));
