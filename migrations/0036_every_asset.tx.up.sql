-- Money in for every asset of the asset table, not only USDC: deposits,
-- watched accounts, the ledger, snapshots and unexplained outflows name
-- their asset by its symbol in lower case (usdc, eurc, pyusd, usdg, usdt,
-- an operator's symbol) or sol, as transactions' kind does. Amounts stay
-- in the asset's base units.
ALTER TABLE deposits DROP CONSTRAINT deposits_asset_check,
    ADD CONSTRAINT deposits_asset_check CHECK (asset ~ '^[a-z0-9]{2,10}$');

--bun:split

ALTER TABLE watched_accounts DROP CONSTRAINT watched_accounts_asset_check,
    ADD CONSTRAINT watched_accounts_asset_check CHECK (asset ~ '^[a-z0-9]{2,10}$');

--bun:split

ALTER TABLE ledger DROP CONSTRAINT ledger_asset_check,
    ADD CONSTRAINT ledger_asset_check CHECK (asset ~ '^[a-z0-9]{2,10}$');

--bun:split

ALTER TABLE balance_snapshots DROP CONSTRAINT balance_snapshots_asset_check,
    ADD CONSTRAINT balance_snapshots_asset_check CHECK (asset ~ '^[a-z0-9]{2,10}$');

--bun:split

ALTER TABLE unexplained_outflows DROP CONSTRAINT unexplained_outflows_asset_check,
    ADD CONSTRAINT unexplained_outflows_asset_check CHECK (asset ~ '^[a-z0-9]{2,10}$');

--bun:split

-- Who moved the money when the wallet did not sign the transaction: a
-- delegate (a Token-2022 mint's permanent delegate, or one the wallet's
-- key approved). NULL: the wallet's own key signed it.
ALTER TABLE unexplained_outflows ADD COLUMN authority text;
