import type { Row } from '../types.js';

/**
 * Footnotes for the backends' notes on rows (e.g. a variant that ran another form on this adapter,
 * a pool call that ran inline): each distinct note text gets a number in first-seen order, so a
 * report can mark the rows and print every note once under its table.
 */
export interface Footnotes {
  /** The note texts, footnote i + 1 at index i. */
  readonly texts: readonly string[];
  /** ` [1,3]` for a row with notes 1 and 3, '' for a row without notes. */
  marker(row: Row): string;
  /** The numbers of one row's notes. */
  numbers(row: Row): number[];
}

export function footnotes(rows: readonly Row[]): Footnotes {
  const texts: string[] = [];
  const numbers = (row: Row): number[] => {
    if (row.status !== 'ok' || !row.notes?.length) return [];
    return row.notes.map((n) => {
      let i = texts.indexOf(n);
      if (i < 0) i = texts.push(n) - 1;
      return i + 1;
    });
  };
  for (const row of rows) numbers(row);
  return { texts, numbers, marker: (row) => formatMarker(numbers(row)) };
}

export const formatMarker = (ns: readonly number[]): string => (ns.length ? ` [${[...new Set(ns)].sort((a, b) => a - b).join(',')}]` : '');
