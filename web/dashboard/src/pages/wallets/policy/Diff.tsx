import { short, usdc } from '../../../format';
import type { Change } from './policy-draft';

/** ChangeItem is one change: a field's or a rule's old → new, an address added, removed or relabelled. */
function ChangeItem({ c }: { c: Change }) {
  switch (c.kind) {
    case 'field':
      return (
        <li data-change={c.field}>
          {c.name}: <del>{usdc(c.from)}</del> → <ins>{usdc(c.to)}</ins>
        </li>
      );
    case 'rule':
      return (
        <li data-change={c.field}>
          {c.name}: <del>{c.from}</del> → <ins>{c.to}</ins>
        </li>
      );
    case 'added':
      return (
        <li data-change="added">
          Allowlist: added <code>{c.address}</code>
          {c.label && ` (${c.label})`}
        </li>
      );
    case 'removed':
      return (
        <li data-change="removed">
          Allowlist: removed <code>{c.address}</code>
          {c.label && ` (${c.label})`}
        </li>
      );
    case 'relabelled':
      return (
        <li data-change="relabelled">
          Allowlist: <code>{short(c.address)}</code> relabelled <del>{c.from || 'no label'}</del> → <ins>{c.to || 'no label'}</ins>
        </li>
      );
  }
}

/** Diff lists the changes a save would make. */
export function Diff({ changes, testid }: { changes: Change[]; testid?: string }) {
  return (
    <ul
      className="my-1 grid gap-1 pl-5 [&_code]:break-all [&_del]:text-bad [&_ins]:font-semibold [&_ins]:text-ok [&_ins]:no-underline"
      data-testid={testid}
    >
      {changes.map((c, i) => (
        <ChangeItem key={i} c={c} />
      ))}
    </ul>
  );
}
