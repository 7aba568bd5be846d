import { useState } from 'react';
import { useMutation } from '@tanstack/react-query';
import { ConfirmDialog } from '../../components/ConfirmDialog';
import { Icon } from '../../components/Icon';
import { toast } from '../../components/Toast';
import { errorText } from '../../format';
import type { Session } from '../../services/session';
import { type Wallet, freezeWallet, unfreezeWallet } from '../../services/wallets';

/** Freeze stops every send at once (owners and approvers); only owners unfreeze. Both ask first. */
export function Freeze({ agent, session, onChanged }: { agent: Wallet; session: Session; onChanged: (a: Wallet) => void }) {
  const frozen = agent.state === 'frozen';
  const may = frozen ? session.role === 'owner' : session.role === 'owner' || session.role === 'approver';
  const [confirming, setConfirming] = useState(false);
  const change = useMutation({
    mutationFn: () => (frozen ? unfreezeWallet(agent.id) : freezeWallet(agent.id)),
    onSuccess: (a) => {
      onChanged(a);
      setConfirming(false);
      toast(a.state === 'frozen' ? `${a.label} is frozen: every send is blocked.` : `${a.label} is active again.`);
    },
  });
  const busy = change.isPending;
  const error = change.error ? errorText(change.error) : '';
  const act = () => change.mutate();

  return (
    <section className={`card flex flex-wrap items-center gap-x-4 gap-y-2 ${frozen ? 'border-info/50 bg-info-soft' : ''}`} aria-label="Freeze">
      <div className="min-w-0 flex-1">
        <h2 className="mt-0 mb-1">{frozen ? 'Frozen' : 'Active'}</h2>
        <p className="m-0">
          {frozen ? 'Every send is blocked (wallet_frozen) until an owner unfreezes the wallet.' : 'Sends are decided by the policy below.'}
        </p>
        {!may && frozen && session.role === 'approver' && <p className="notice mt-1 mb-0">Only an owner can unfreeze it.</p>}
      </div>
      {may && (
        <button type="button" className={`btn ${frozen ? 'btn-primary' : 'btn-danger'}`} onClick={() => setConfirming(true)}>
          <Icon name={frozen ? 'check' : 'snow'} />
          {frozen ? 'Unfreeze…' : 'Freeze…'}
        </button>
      )}
      {/* The confirming button takes the focus, so the keyboard goes on from where it was. */}
      <ConfirmDialog
        open={confirming}
        title={frozen ? `Unfreeze ${agent.label}?` : `Freeze ${agent.label}?`}
        confirm={frozen ? 'Confirm unfreeze' : 'Confirm freeze'}
        tone={frozen ? 'primary' : 'danger'}
        busy={busy}
        error={error}
        onConfirm={act}
        onClose={() => setConfirming(false)}
      >
        <p className="m-0">{frozen ? 'Its agents can send again, within the policy.' : 'Every send is blocked until an owner unfreezes it.'}</p>
      </ConfirmDialog>
      {error && !confirming && (
        <p role="alert" className="error basis-full">
          {error}
        </p>
      )}
    </section>
  );
}
