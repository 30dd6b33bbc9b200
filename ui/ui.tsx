import type { ReactNode } from "react";
import type { Answer } from "./api.ts";

/** What a page shows for an answer that is not data: a missing endpoint says what it waits for. */
export function Problem({ answer, what }: { answer: Extract<Answer<unknown>, { ok: false }>; what: string }) {
  if (answer.status === 404) {
    return <p className="note" role="status">This gateway does not serve {what} yet (the admin API of contract 19). Update parley to see this page.</p>;
  }
  if (answer.status === 403) return <p className="note" role="status">This key may not read {what}: {answer.message}</p>;
  return <p className="error" role="alert">{answer.message}</p>;
}

export function Empty({ children }: { children: ReactNode }) {
  return <div className="empty" role="status">{children}</div>;
}

export interface Column<T> {
  label: string;
  value: (row: T) => ReactNode;
  numeric?: boolean;
  /** Long text that may wrap (lists of models), so the table stays within the window. */
  wrap?: boolean;
}

export function Table<T>({ rows, columns, caption, rowKey }: { rows: T[]; columns: Column<T>[]; caption: string; rowKey: (row: T, i: number) => string }) {
  return (
    <div className="scroll" tabIndex={0} role="region" aria-label={caption}>
      <table>
        <caption className="sr-only">{caption}</caption>
        <thead>
          <tr>{columns.map((c) => <th key={c.label} scope="col" className={c.numeric ? "n" : undefined}>{c.label}</th>)}</tr>
        </thead>
        <tbody>
          {rows.map((row, i) => (
            <tr key={rowKey(row, i)}>{columns.map((c) => <td key={c.label} className={c.numeric ? "n" : c.wrap ? "wrap" : undefined}>{c.value(row)}</td>)}</tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
