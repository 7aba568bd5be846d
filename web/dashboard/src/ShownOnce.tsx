import { type ReactNode, useState } from 'react';

/**
 * ShownOnce shows a secret that is never shown again (only a hash or a
 * sealed copy is kept), with a copy button; children say what it is for.
 */
export function ShownOnce({ title, value, testId, onDone, children }: { title: string; value: string; testId: string; onDone: () => void; children: ReactNode }) {
  const [copied, setCopied] = useState(false);
  return (
    <div role="dialog" aria-modal="true" aria-label={title} className="decide">
      {children}
      <code data-testid={testId}>{value}</code>
      <div className="buttons">
        <button
          type="button"
          className="primary"
          autoFocus
          onClick={async () => {
            await navigator.clipboard.writeText(value).catch(() => undefined);
            setCopied(true);
          }}
        >
          {copied ? 'Copied' : 'Copy'}
        </button>
        <button type="button" onClick={onDone}>
          Done
        </button>
      </div>
    </div>
  );
}
