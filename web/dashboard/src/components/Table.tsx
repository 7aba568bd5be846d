import type { ReactNode } from 'react';

/** Column is a table's column: its heading, with num for a column of numbers (aligned right). */
export type Column = string | { name: string; num: true };

/**
 * Table is a table of rows (children) under a row of column headings, in
 * order; a column given as false (one the reader may not see) is left out.
 * label is its accessible name; className its classes ("table" unless given).
 */
export function Table({
  label,
  columns,
  className = 'table',
  children,
}: {
  label: string;
  columns: (Column | false)[];
  className?: string;
  children: ReactNode;
}) {
  return (
    <table className={className} aria-label={label}>
      <thead>
        <tr>
          {columns.map((c) => {
            if (c === false) return null;
            const { name, num } = typeof c === 'string' ? { name: c, num: false } : c;
            return (
              <th key={name} scope="col" className={num ? 'num' : undefined}>
                {name}
              </th>
            );
          })}
        </tr>
      </thead>
      <tbody>{children}</tbody>
    </table>
  );
}
