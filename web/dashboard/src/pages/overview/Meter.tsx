/** Meter is a share of a limit as a bar: green, amber from 80 %, red at the limit. */
export function Meter({
  share,
  label,
  max,
  value,
  text,
  className = '',
}: {
  share: number;
  label: string;
  max: number;
  value: number;
  text: string;
  className?: string;
}) {
  const level = share >= 1 ? 'full' : share >= 0.8 ? 'high' : '';
  return (
    <div
      className={`ov-meter ${level} h-2 overflow-hidden rounded-full bg-subtle ${className}`}
      role="meter"
      aria-label={label}
      aria-valuemin={0}
      aria-valuemax={max}
      aria-valuenow={value}
      aria-valuetext={text}
    >
      <div className={`h-full ${level === 'full' ? 'bg-bad' : level === 'high' ? 'bg-warn' : 'bg-ok'}`} style={{ width: `${share * 100}%` }} />
    </div>
  );
}
