import type { ReactNode } from 'react';
import { Modal } from './Modal';

/**
 * ConfirmDialog is the second step of an action that moves money or
 * cannot be taken back: a modal alert dialog that says what will happen,
 * with the confirming button focused and a Cancel beside it (Escape
 * cancels too).
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
    <Modal open={open} title={title} role="alertdialog" onClose={() => !busy && onClose()}>
      {children}
      {error && (
        <p role="alert" className="error m-0">
          {error}
        </p>
      )}
      <div className="mt-2 flex flex-wrap-reverse justify-end gap-2">
        <button type="button" className="btn" onClick={onClose} disabled={busy}>
          Cancel
        </button>
        <button type="button" className={`btn btn-${tone}`} onClick={onConfirm} disabled={busy} data-autofocus>
          {confirm}
        </button>
      </div>
    </Modal>
  );
}
