/**
 * Middle shows a long identifier (an address, a target) on one line, cut
 * in its middle when it does not fit: its start and its end stay, which
 * is how people compare addresses. The whole value is in the text (a
 * screen reader reads it, a copy copies it) and in the title.
 */
export function Middle({ text, tail = 6, className = '' }: { text: string; tail?: number; className?: string }) {
  if (text.length <= tail * 2) return <span className={className}>{text}</span>;
  return (
    <span className={`middle ${className}`} title={text}>
      <span>{text.slice(0, -tail)}</span>
      <span>{text.slice(-tail)}</span>
    </span>
  );
}
