import { setFeePayer } from '../../services/feePayer';
import { useAct } from './useAct';

/** SponsorOn offers owners fee sponsorship while it is off: one fee payer pays every wallet's fees. */
export function SponsorOn({ onChange }: { onChange: () => void }) {
  const { busy, error, act } = useAct(onChange);
  return (
    <div className="mt-3">
      <p className="notice">Fee sponsorship is off: each wallet pays its own fees in SOL.</p>
      <button type="button" className="btn" disabled={busy} onClick={() => void act(() => setFeePayer({ enabled: true }))}>
        {busy ? 'Turning on…' : 'Turn on fee sponsorship'}
      </button>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
    </div>
  );
}
