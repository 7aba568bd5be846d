import { useSyncExternalStore } from 'react';
import * as T from '@radix-ui/react-toast';
import { Icon } from './Icon';

/**
 * Toasts say how an action ended (approved, saved, failed) without moving
 * the reader's place: Radix Toast announces each one in a live region
 * (politely; a failure at once), keeps it while hovered or focused, and
 * F8 jumps to them. toast() may be called from anywhere.
 */
type Toast = { id: number; text: string; tone: 'ok' | 'bad' };

let toasts: Toast[] = [];
let next = 1;
const listeners = new Set<() => void>();
const emit = () => listeners.forEach((l) => l());

/** toast shows a short message about an action's result. */
export function toast(text: string, tone: Toast['tone'] = 'ok') {
  toasts = [...toasts, { id: next++, text, tone }].slice(-3);
  emit();
}

const dismiss = (id: number) => {
  toasts = toasts.filter((t) => t.id !== id);
  emit();
};
const subscribe = (l: () => void) => {
  listeners.add(l);
  return () => listeners.delete(l);
};

/** Toaster is where toasts appear: the foot of the screen, above everything. */
export function Toaster() {
  const shown = useSyncExternalStore(subscribe, () => toasts);
  return (
    <T.Provider duration={6000} label="Notification">
      {shown.map((t) => (
        <T.Root
          key={t.id}
          type={t.tone === 'bad' ? 'foreground' : 'background'}
          onOpenChange={(open) => !open && dismiss(t.id)}
          className={`card flex items-start gap-3 p-3 shadow-lg ${t.tone === 'bad' ? 'border-bad/50' : 'border-ok/50'}`}
          data-toast={t.tone}
        >
          <span className={t.tone === 'bad' ? 'text-bad' : 'text-ok'}>
            <Icon name={t.tone === 'bad' ? 'alert' : 'check'} className="size-5" />
          </span>
          <T.Title className="flex-1 text-sm font-medium wrap-anywhere">{t.text}</T.Title>
          <T.Close className="btn btn-sm -my-1 min-h-7 px-2" aria-label="Dismiss">
            <Icon name="cross" />
          </T.Close>
        </T.Root>
      ))}
      <T.Viewport className="fixed right-0 bottom-0 z-50 m-0 flex w-full max-w-sm list-none flex-col gap-2 p-3 outline-none" />
    </T.Provider>
  );
}
