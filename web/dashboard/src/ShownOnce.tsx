import { type ReactNode, useState } from 'react';

/**
 * ShownOnce shows a secret that is never shown again (only a hash or a
 * sealed copy is kept), with a copy button; children say what it is for.
 */
export function ShownOnce({
  title,
  value,
  testId,
  onDone,
  children,
}: {
  title: string;
  value: string;
  testId: string;
  onDone: () => void;
  children: ReactNode;
}) {
  const [copied, setCopied] = useState<'' | 'yes' | 'no'>('');
  return (
    <div role="dialog" aria-modal="true" aria-label={title} className="decide">
      {children}
      <code data-testid={testId}>{value}</code>
      {copied === 'no' && (
        <p role="alert" className="warn">
          The browser refused the clipboard: select the text above and copy it.
        </p>
      )}
      <div className="buttons">
        <button
          type="button"
          className="btn btn-primary"
          autoFocus
          onClick={async () => {
            // Only a copy that happened may say so: Done loses the secret.
            const ok = await navigator.clipboard.writeText(value).then(
              () => true,
              () => false,
            );
            setCopied(ok ? 'yes' : 'no');
          }}
        >
          {copied === 'yes' ? 'Copied' : 'Copy'}
        </button>
        <button type="button" className="btn" onClick={onDone}>
          Done
        </button>
      </div>
    </div>
  );
}
