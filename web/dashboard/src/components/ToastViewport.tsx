import * as T from '@radix-ui/react-toast';
import { Icon } from './Icon';
import type { Shown } from './Toast';

/**
 * ToastViewport draws the toasts with Radix Toast, which announces each in
 * a live region (politely; a failure at once), keeps it while hovered or
 * focused, and lets F8 jump to them. Loaded on demand (see Toaster).
 */
export default function ToastViewport({ shown, dismiss }: { shown: Shown[]; dismiss: (id: number) => void }) {
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
