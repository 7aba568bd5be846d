import { Suspense, lazy, useEffect, useState, useSyncExternalStore } from 'react';

/**
 * Toasts say how an action ended (approved, saved, failed) without moving
 * the reader's place. toast() may be called from anywhere; the Toaster in
 * the page's frame shows them with Radix Toast (ToastViewport), whose code
 * is fetched after the first page shows, not as part of it.
 */
export type Shown = { id: number; text: string; tone: 'ok' | 'bad' };

let toasts: Shown[] = [];
let next = 1;
const listeners = new Set<() => void>();
const emit = () => listeners.forEach((l) => l());

/** toast shows a short message about an action's result: ok, or bad for a failure. */
export function toast(text: string, tone: Shown['tone'] = 'ok') {
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

const load = () => import('./ToastViewport');
const ToastViewport = lazy(load);

/**
 * Toaster is where toasts appear: the foot of the screen, above everything.
 * Its code is fetched a second after the first page (or with the first
 * toast, if sooner): rendered at once, the lazy viewport would be fetched
 * with the first page.
 */
export function Toaster() {
  const shown = useSyncExternalStore(subscribe, () => toasts);
  const [ready, setReady] = useState(false);
  useEffect(() => {
    let live = true;
    const t = setTimeout(() => void load().then(() => live && setReady(true)), 1000);
    return () => {
      live = false;
      clearTimeout(t);
    };
  }, []);
  if (!ready && shown.length === 0) return null;
  return (
    <Suspense fallback={null}>
      <ToastViewport shown={shown} dismiss={dismiss} />
    </Suspense>
  );
}
