import { type ReactNode, useState } from 'react';
import { Modal } from './Modal';

/**
 * ShownOnce shows a secret that is never shown again (only a hash or a
 * sealed copy is kept), with a copy button; children say what it is for.
 * It is a modal dialog that only Done closes: neither Escape nor a click
 * outside loses the secret.
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
    // Only Done closes it: neither Escape nor a click outside loses the secret.
    <Modal open title={title} onClose={() => {}}>
      {children}
      <code data-testid={testId} className="block rounded-md border border-line bg-subtle p-3 break-all select-all">
        {value}
      </code>
      {copied === 'no' && (
        <p role="alert" className="warn m-0">
          The browser refused the clipboard: select the text above and copy it.
        </p>
      )}
      <div className="buttons justify-end">
        <button
          type="button"
          className="btn btn-primary"
          data-autofocus
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
    </Modal>
  );
}
