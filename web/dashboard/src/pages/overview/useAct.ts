import { useState } from 'react';
import { errorText } from '../../format';

/** useAct runs one owner action at a time and keeps its failure to show; onDone follows a success. */
export function useAct(onDone: () => void) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  const act = async (f: () => Promise<unknown>) => {
    setBusy(true);
    setError('');
    try {
      await f();
      onDone();
    } catch (e) {
      setError(errorText(e));
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, act };
}
