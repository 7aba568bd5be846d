import { useQuery } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { CopyButton } from '../../components/CopyButton';
import { SkeletonRows } from '../../components/Skeleton';
import { Time } from '../../components/Time';
import { errorText } from '../../format';
import { QR } from '../../qr';
import { invalidate, queryClient } from '../../services/queryClient';
import type { Session } from '../../services/session';
import { assetsQuery } from '../../services/assets';
import { usersQuery } from '../../services/users';
import { type Wallet, walletActivityQuery, walletHistoryQuery, walletKeys, walletQuery } from '../../services/wallets';
import { AskExport } from './AskExport';
import { BalanceOverTime } from './BalanceOverTime';
import { Differences } from './Differences';
import { Freeze } from './Freeze';
import { Fund } from './Fund';
import { Holdings } from './Holdings';
import { PolicyEditor } from './policy/PolicyEditor';
import { PolicyView } from './policy/PolicyView';
import { PolicyHistory } from './PolicyHistory';
import { StateBadge } from './StateBadge';

/** signerNames say where a wallet's key lives. */
const signerNames = {
  local: 'Sealed in the database (local)',
  pkcs11: 'In an HSM (PKCS#11)',
  vault: 'In Vault Transit',
  awskms: 'In AWS KMS',
} as const;
import { WalletApprovals } from './WalletApprovals';
import { WalletTransactions } from './WalletTransactions';

/** WalletPage is one wallet: its address, balance (now and over time, and what of it is unexplained), state, policy and what happened to it. */
export function WalletPage({ id, session }: { id: string; session: Session }) {
  const owner = session.role === 'owner';
  // The wallet's balance is read from the chain on each load, and its
  // lists cost reads too: both less often than the inbox.
  const read = walletQuery(id);
  const key = read.queryKey;
  const { data: agent = null, error: agentFailure } = useQuery(read);
  const error = agentFailure ? errorText(agentFailure) : '';
  const { data: activity = null, error: activityFailure } = useQuery(walletActivityQuery(id));
  const activityError = activityFailure ? errorText(activityFailure) : '';
  // The history is read again whenever the policy or the state is seen to
  // change (its key holds them); the last one shows meanwhile.
  const changeKey = agent ? JSON.stringify([agent.policy, agent.state]) : '';
  const { data: history = null, error: historyFailure } = useQuery(walletHistoryQuery(id, changeKey));
  const historyError = historyFailure ? errorText(historyFailure) : '';
  // The owners and approvers bound how many approvals a wallet may need;
  // until they are read, the API's answer says it.
  const { data: users } = useQuery({ ...usersQuery(), enabled: owner });
  const people = users?.filter((u) => u.role !== 'viewer').length;
  // The network's assets: each one's balance is listed (zero without a
  // token account), picked on the chart, and offered in the policy editor.
  const { data: assets } = useQuery(assetsQuery());
  const symbols = assets?.map((a) => a.symbol);

  // An action's answer is the wallet as it is now: reads started before it
  // are cancelled so they do not put the old one back.
  const set = async (a: Wallet) => {
    await queryClient.cancelQueries({ queryKey: key, exact: true });
    queryClient.setQueryData(key, a);
    void invalidate(walletKeys.all, walletKeys.balance(a.id));
  };
  // Answers of freeze, unfreeze and the policy carry no balance: keep the one shown.
  const adopt = (a: Wallet) => set({ ...a, balance: a.balance ?? agent?.balance });

  if (!agent) {
    return (
      <main className="page">
        {error ? (
          <p role="alert" className="error">
            {error}
          </p>
        ) : (
          <>
            <h1 className="sr-only">Wallet</h1>
            <div className="skeleton mb-4 h-9 w-56" aria-hidden="true" />
            <SkeletonRows rows={3} height="h-28" />
          </>
        )}
      </main>
    );
  }
  return (
    <main className="page">
      <p className="mb-2">
        <Link to="/wallets" className="tap">
          ← All wallets
        </Link>
      </p>
      <h1 className="flex flex-wrap items-center gap-x-3 gap-y-1 wrap-anywhere">
        {agent.label} <StateBadge state={agent.state} />
        {agent.exportedAt && (
          <span data-testid="exported" className="badge badge-warn align-middle text-sm" title="An owner exported this wallet's secret">
            exported
          </span>
        )}
      </h1>
      {error && <p className="error">Could not refresh: {error}</p>}
      <dl className="card mb-4 grid gap-x-6 gap-y-3 sm:grid-cols-3">
        <div className="sm:col-span-3">
          <dt className="text-sm font-semibold text-muted">Address</dt>
          <dd className="flex flex-wrap items-center gap-2">
            <code data-testid="address" className="break-all">
              {agent.pubkey}
            </code>{' '}
            <CopyButton text={agent.pubkey} what="address" />
          </dd>
        </div>
        <div className="sm:col-span-3">
          <dt className="text-sm font-semibold text-muted">Balance</dt>
          <dd className="mt-1">
            <Holdings balance={agent.balance} assets={symbols} />
          </dd>
        </div>
        <div>
          <dt className="text-sm font-semibold text-muted">Created</dt>
          <dd>
            <Time at={agent.createdAt} />
          </dd>
        </div>
        <div>
          <dt className="text-sm font-semibold text-muted">Wallet id</dt>
          <dd>
            <code className="text-sm break-all">{agent.id}</code>
          </dd>
        </div>
        <div>
          <dt className="text-sm font-semibold text-muted">Key</dt>
          <dd data-testid="signer">{signerNames[agent.signer]}</dd>
        </div>
        {agent.exportedAt && (
          <div className="sm:col-span-2">
            <dt className="text-sm font-semibold text-muted">Exported</dt>
            <dd>
              <Time at={agent.exportedAt} /> — its secret exists outside the service for good: move the funds to a new wallet to be sure no one else
              can spend them.
            </dd>
          </div>
        )}
      </dl>

      <Freeze agent={agent} session={session} onChanged={adopt} />

      <section className="card mt-4" aria-label="Receive funds">
        <h2>Receive funds</h2>
        <div className="flex flex-wrap items-start gap-4">
          <QR text={agent.pubkey} label={`QR code of the address ${agent.pubkey}`} />
          <div className="min-w-0 flex-[1_1_16rem]">
            <p className="mt-0">
              Send USDC or another of the assets above ({session.network === 'mainnet' ? 'mainnet' : 'test tokens'}) and a little SOL for fees to:
            </p>
            <p className="flex flex-wrap items-center gap-2">
              <code className="break-all">{agent.pubkey}</code> <CopyButton text={agent.pubkey} what="address to receive" />
            </p>
            {session.localChain && owner && <Fund id={agent.id} onFunded={(b) => set({ ...agent, balance: b })} />}
          </div>
        </div>
      </section>

      <BalanceOverTime id={agent.id} assets={[...(symbols ?? ['USDC']), 'SOL']} />

      <Differences id={agent.id} network={session.network} />

      <section className="card mt-4" aria-label="Policy">
        <h2>Policy</h2>
        {owner ? (
          <PolicyEditor key={agent.id} agent={agent} people={people} assets={assets} onSaved={adopt} />
        ) : (
          <>
            <p className="notice">Your role ({session.role}) can read the policy; owners change it.</p>
            <PolicyView policy={agent.policy} />
          </>
        )}
      </section>

      <PolicyHistory history={history} error={historyError} />

      <WalletTransactions agent={agent} activity={activity} error={activityError} session={session} />

      <WalletApprovals activity={activity} error={activityError} />

      {owner && <AskExport agent={agent} />}
    </main>
  );
}
