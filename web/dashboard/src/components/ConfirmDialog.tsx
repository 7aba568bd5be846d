import type { ReactNode } from 'react';
import { Dialog, DialogPanel, DialogTitle } from '@headlessui/react';

/**
 * ConfirmDialog is the second step of an action that moves money or
 * cannot be taken back: a modal alert dialog (Headless UI: focus kept
 * inside, Escape cancels, the page behind inert) that says what will
 * happen, with the confirming button focused and a Cancel beside it.
 */
export function ConfirmDialog({
  open,
  title,
  confirm,
  tone = 'primary',
  busy = false,
  error = '',
  onConfirm,
  onClose,
  children,
}: {
  open: boolean;
  title: string;
  /** confirm is the confirming button's name, such as "Confirm approval". */
  confirm: string;
  tone?: 'primary' | 'danger';
  busy?: boolean;
  error?: string;
  onConfirm: () => void;
  onClose: () => void;
  children: ReactNode;
}) {
  return (
    <Dialog open={open} onClose={() => !busy && onClose()} role="alertdialog" className="relative z-50">
      <div className="fixed inset-0 bg-scrim" aria-hidden="true" />
      <div className="fixed inset-0 flex items-end justify-center overflow-y-auto p-3 sm:items-center sm:p-6">
        <DialogPanel className="card w-full max-w-lg p-5 shadow-xl">
          <DialogTitle as="h2" className="mt-0">
            {title}
          </DialogTitle>
          <div className="grid gap-3">{children}</div>
          {error && (
            <p role="alert" className="error mt-3">
              {error}
            </p>
          )}
          <div className="mt-5 flex flex-wrap-reverse justify-end gap-2">
            <button type="button" className="btn" onClick={onClose} disabled={busy}>
              Cancel
            </button>
            <button type="button" className={`btn btn-${tone}`} onClick={onConfirm} disabled={busy} data-autofocus>
              {confirm}
            </button>
          </div>
        </DialogPanel>
      </div>
    </Dialog>
  );
}
