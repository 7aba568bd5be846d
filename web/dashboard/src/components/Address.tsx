import { short } from '../format';

/** Address is an address cut short on one line, the whole of it in the title. */
export function Address({ value }: { value: string }) {
  return (
    <code title={value} className="whitespace-nowrap">
      {short(value)}
    </code>
  );
}
