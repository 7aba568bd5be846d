import { type ReactNode, Suspense, lazy, useEffect } from 'react';

const load = () => import('./ModalPanel');
const ModalPanel = lazy(load);

/**
 * Modal is a modal dialog while open, and nothing while closed. Its code
 * (Headless UI's Dialog) is not part of the first page load: a page that
 * may open one fetches it half a second after it shows, before anyone clicks.
 */
export function Modal({
  open,
  title,
  role = 'dialog',
  onClose,
  children,
}: {
  open: boolean;
  title: string;
  role?: 'dialog' | 'alertdialog';
  onClose: () => void;
  children: ReactNode;
}) {
  useEffect(() => {
    const t = setTimeout(() => void load(), 500);
    return () => clearTimeout(t);
  }, []);
  if (!open) return null;
  return (
    <Suspense fallback={null}>
      <ModalPanel title={title} role={role} onClose={onClose}>
        {children}
      </ModalPanel>
    </Suspense>
  );
}
