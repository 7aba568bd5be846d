// The event stream wired into the query cache: one stream per signed-in
// session, each event refetching the reads it changes (services/liveReads.ts,
// EVENT_READS), and polling of those reads only while the stream is down.
import { useEffect, useState } from 'react';
import { toast } from './components/Toast';
import { short } from './format';
import { type Live, type LiveEvent, type LiveStatus, openLive } from './live';
import { liveEvent, liveReset } from './services/liveReads';
import { setStreamUp } from './services/queryClient';

/**
 * follow feeds a stream into the query cache: events make their reads
 * stale (each once: the stream drops repeats), a reset (the server could
 * not replay, or the stream reconnected after an error) makes every read
 * stale, and its status turns polling off (live) or on (down). The returned function detaches it and turns polling
 * back on; it does not close the stream.
 */
export function follow(live: Live): () => void {
  const offMessages = live.subscribe((m) => {
    if (m.type === 'reset') return void liveReset();
    announce(m.event);
    void liveEvent(m.event.event);
  });
  const offStatus = live.onStatus((s) => void setStreamUp(s === 'live'));
  void setStreamUp(live.status === 'live');
  return () => {
    offMessages();
    offStatus();
    void setStreamUp(false);
  };
}

/**
 * announce says on screen what a person must not miss: a new owner of the
 * account (user.added with role owner; the stream sends it to people, and
 * owners above all need to know). Everything else only refreshes reads.
 */
function announce(ev: LiveEvent) {
  if (ev.event !== 'user.added' || ev.data.role !== 'owner') return;
  const address = String(ev.data.address ?? '');
  const by = String(ev.data.added_by ?? '');
  const who = by.startsWith('user:') ? short(by.slice(5)) : by === 'system' ? 'the operator' : by;
  toast(`New owner of this account: ${short(address)}, added by ${who}.`);
}

/**
 * useLiveStream opens the stream while the calling component is mounted
 * (the signed-in frame: a sign-out or another account unmounts it, which
 * closes the stream) and says whether it is live.
 */
export function useLiveStream(open: () => Live = openLive): LiveStatus {
  const [status, setStatus] = useState<LiveStatus>('down');
  useEffect(() => {
    const live = open();
    const stop = follow(live);
    const off = live.onStatus(setStatus);
    return () => {
      off();
      stop();
      live.close();
    };
  }, [open]);
  return status;
}

/** StreamStatus says how the page keeps up: live from the stream, or polling while it is down. */
export function StreamStatus({ status }: { status: LiveStatus }) {
  const live = status === 'live';
  return (
    <span
      className="ml-auto inline-flex items-center gap-1.5 text-sm whitespace-nowrap text-muted"
      data-testid="stream"
      title={live ? 'Changes appear as they happen.' : 'The live connection is down: the page reads changes every few seconds.'}
    >
      <span className={`size-2.5 rounded-full border-2 ${live ? 'border-ok bg-ok' : 'border-warn'}`} aria-hidden="true" />
      {/* On phones the dot alone; the words stay for screen readers and the title. */}
      <span className="max-sm:sr-only">{live ? 'Live' : 'Updating every few seconds'}</span>
    </span>
  );
}
