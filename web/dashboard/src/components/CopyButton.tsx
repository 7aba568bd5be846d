import { useState } from 'react';

/** CopyButton copies text and says whether it could (the clipboard needs a secure page and leave). */
export function CopyButton({ text, what }: { text: string; what: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  const shown = { idle: 'Copy', copied: 'Copied', failed: 'Copy failed: select the text' }[state];
  return (
    <button
      type="button"
      className="btn btn-sm"
      aria-label={state === 'idle' ? `Copy ${what}` : shown}
      onClick={async () => {
        try {
          await navigator.clipboard.writeText(text);
          setState('copied');
        } catch {
          setState('failed');
        }
        setTimeout(() => setState('idle'), 2500);
      }}
    >
      {shown}
    </button>
  );
}
