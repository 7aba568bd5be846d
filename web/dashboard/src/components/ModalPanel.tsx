import type { ReactNode } from 'react';
import { Dialog, DialogPanel, DialogTitle } from '@headlessui/react';

/**
 * ModalPanel is a modal dialog of Headless UI: the focus moves in (to the
 * element marked data-autofocus) and stays inside, the page behind is
 * inert and does not scroll, Escape or a click outside calls onClose. It
 * is loaded on demand (see Modal).
 */
export default function ModalPanel({
  title,
  role,
  onClose,
  children,
}: {
  title: string;
  role: 'dialog' | 'alertdialog';
  onClose: () => void;
  children: ReactNode;
}) {
  return (
    // The dialog covers the screen itself (not only its children), so it has a size: tools and tests see it as shown.
    <Dialog open onClose={onClose} role={role} className="fixed inset-0 z-50">
      <div className="fixed inset-0 bg-scrim" aria-hidden="true" />
      <div className="fixed inset-0 flex items-end justify-center overflow-y-auto p-3 sm:items-center sm:p-6">
        <DialogPanel className="card grid w-full max-w-lg gap-3 p-5 shadow-xl">
          <DialogTitle as="h2" className="my-0">
            {title}
          </DialogTitle>
          {children}
        </DialogPanel>
      </div>
    </Dialog>
  );
}
