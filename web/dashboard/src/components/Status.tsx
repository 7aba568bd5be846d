import { Icon, type IconName } from './Icon';

/** Tone is what a status means to the reader: done, failed, waiting, frozen, or nothing in particular. */
export type Tone = 'ok' | 'bad' | 'warn' | 'info' | 'neutral';

const TONES: Record<string, Tone> = {
  sent: 'ok',
  confirmed: 'ok',
  succeeded: 'ok',
  approved: 'ok',
  active: 'ok',
  enabled: 'ok',
  failed: 'bad',
  rejected: 'bad',
  blocked: 'bad',
  expired: 'bad',
  revoked: 'bad',
  pending: 'warn',
  signing: 'warn',
  pending_approval: 'warn',
  frozen: 'info',
};

const ICONS: Record<Tone, IconName> = { ok: 'check', bad: 'cross', warn: 'clock', info: 'snow', neutral: 'dot' };

/** toneOf is the tone of a status word; words it does not know are neutral. */
export const toneOf = (status: string): Tone => TONES[status] ?? 'neutral';

/**
 * Status is a status as a badge: a colour, an icon and the word, so it
 * reads without colour too. The text is the status (or label) alone.
 */
export function Status({
  status,
  label,
  tone,
  className = '',
  testId,
  ...data
}: {
  status: string;
  label?: string;
  tone?: Tone;
  className?: string;
  testId?: string;
} & Record<`data-${string}`, string>) {
  const t = tone ?? toneOf(status);
  return (
    <span className={`badge ${t === 'neutral' ? '' : `badge-${t}`} ${className}`} data-testid={testId} {...data}>
      <Icon name={ICONS[t]} className="size-3.5" />
      {label ?? status}
    </span>
  );
}
