/**
 * The console's small kit: loading state, tables, paging, messages, confirmations, charts.
 * Every piece of text goes through Preact's text nodes (never innerHTML), so whatever a member,
 * a receipt or a support message says shows as that text.
 */
import { cloneElement, type ComponentChildren, isValidElement, type JSX } from 'preact';
import { useCallback, useEffect, useId, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';

import { ApiError } from './api.ts';

/** The totals of the three review queues, shown in the navigation. */
export interface Counts {
  redemptions: number;
  scans: number;
  handoffs: number;
}

/** What every page gets: the route's parts after its own name (#/members/usr_1 → ['usr_1']). */
export interface PageProps {
  route: string[];
  counts: Counts | undefined;
}

export interface Load<T> {
  data?: T;
  error?: Error;
  loading: boolean;
  reload: () => void;
}

/** Runs `fn` now and whenever `deps` change; a newer run's answer replaces an older one's. */
export function useLoad<T>(fn: () => Promise<T>, deps: unknown[]): Load<T> {
  const [state, setState] = useState<{ data?: T; error?: Error; loading: boolean }>({ loading: true });
  const [tick, setTick] = useState(0);
  const run = useRef(0);
  useEffect(() => {
    const mine = ++run.current;
    setState((s) => ({ ...s, loading: true }));
    fn().then(
      (data) => mine === run.current && setState({ data, loading: false }),
      (error: Error) => mine === run.current && setState({ error, loading: false }),
    );
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { ...state, reload };
}

/** Sent on the window after every action that succeeded. */
export const CHANGED = 'console:changed';

/** Runs an action (a button's), keeping its error for display and telling when it is busy. */
export function useAction<A extends unknown[]>(
  fn: (...args: A) => Promise<unknown>,
): { run: (...args: A) => Promise<boolean>; busy: boolean; error: Error | undefined; clear: () => void } {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<Error | undefined>();
  const run = async (...args: A) => {
    setBusy(true);
    setError(undefined);
    try {
      await fn(...args);
      // Whatever changed may change a review queue: the shell reads its counts again.
      dispatchEvent(new Event(CHANGED));
      return true;
    } catch (err) {
      setError(err as Error);
      return false;
    } finally {
      setBusy(false);
    }
  };
  return { run, busy, error, clear: () => setError(undefined) };
}

export function ErrorMessage({ error }: { error: Error | undefined }) {
  if (!error) return null;
  const status = error instanceof ApiError ? ` (${error.status})` : '';
  return (
    <p class="error" role="alert">
      {error.message}
      {status}
    </p>
  );
}

export function Notice({ children }: { children: ComponentChildren }) {
  return (
    <p class="notice" role="status">
      {children}
    </p>
  );
}

export function Loading({ load }: { load: Load<unknown> }) {
  if (load.error) return <ErrorMessage error={load.error} />;
  if (load.loading && load.data === undefined) return <p aria-busy="true">Loading…</p>;
  return null;
}

export interface Column<R> {
  label: string;
  cell: (row: R) => ComponentChildren;
  /** right-aligned (numbers) */
  num?: boolean;
}

export function Table<R>({
  caption,
  columns,
  rows,
  empty = 'Nothing here.',
  rowKey,
}: {
  caption: string;
  columns: Column<R>[];
  rows: R[];
  empty?: string;
  rowKey: (row: R) => string;
}) {
  return (
    // Focusable and named: a table wider than a phone scrolls here, and the keyboard must reach it.
    <div class="table-wrap" tabIndex={0} role="region" aria-label={caption}>
      <table>
        <caption>{caption}</caption>
        <thead>
          <tr>
            {columns.map((c) => (
              <th scope="col" class={c.num ? 'num' : undefined}>
                {c.label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.length === 0 ? (
            <tr>
              <td colSpan={columns.length}>{empty}</td>
            </tr>
          ) : (
            rows.map((r) => (
              <tr key={rowKey(r)}>
                {columns.map((c) => (
                  <td class={c.num ? 'num' : undefined}>{c.cell(r)}</td>
                ))}
              </tr>
            ))
          )}
        </tbody>
      </table>
    </div>
  );
}

export function Pager({
  page,
  limit,
  total,
  onPage,
  label,
}: {
  page: number;
  limit: number;
  total: number;
  onPage: (page: number) => void;
  label: string;
}) {
  const pages = Math.max(1, Math.ceil(total / limit));
  return (
    <nav class="pager" aria-label={`${label} pages`}>
      <button type="button" disabled={page <= 1} onClick={() => onPage(page - 1)}>
        Previous
      </button>
      <span>
        Page {page} of {pages} ({total} in all)
      </span>
      <button type="button" disabled={page >= pages} onClick={() => onPage(page + 1)}>
        Next
      </button>
    </nav>
  );
}

/**
 * A labelled form control: the label names the control (`for`/`id`) and the hint describes it
 * (`aria-describedby`), so a select's options or the hint never become part of its name. Several
 * children (or none that is an element) are wrapped by the label instead.
 */
export function Field({ label, children, hint }: { label: string; children: ComponentChildren; hint?: string }) {
  const id = useId();
  const hintId = hint ? `${id}-hint` : undefined;
  if (isValidElement(children)) {
    const own = (children.props as { id?: string }).id;
    const control = cloneElement(children, { id: own ?? id, 'aria-describedby': hintId });
    return (
      <div class="field">
        <label for={own ?? id}>{label}</label>
        {control}
        {hint ? <small id={hintId}>{hint}</small> : null}
      </div>
    );
  }
  return (
    <div class="field">
      <label>
        <span>{label}</span>
        {children}
      </label>
      {hint ? <small id={hintId}>{hint}</small> : null}
    </div>
  );
}

/**
 * A confirmation in a modal <dialog> (focus kept inside, Escape cancels): it says what the
 * action does before it is done.
 */
export function Confirm({
  open,
  title,
  children,
  confirmLabel,
  danger,
  onConfirm,
  onCancel,
}: {
  open: boolean;
  title: string;
  children: ComponentChildren;
  confirmLabel: string;
  danger?: boolean;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (open && !d.open) d.showModal();
    if (!open && d.open) d.close();
  }, [open]);
  return (
    <dialog ref={ref} aria-labelledby={titleId} onCancel={onCancel}>
      <h2 id={titleId}>{title}</h2>
      <div>{children}</div>
      <div class="actions">
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
        <button type="button" class={danger ? 'danger' : 'primary'} onClick={onConfirm}>
          {confirmLabel}
        </button>
      </div>
    </dialog>
  );
}

export function Badge({ children, tone }: { children: ComponentChildren; tone?: 'warn' | 'ok' | 'bad' }) {
  return <span class={`badge${tone ? ` ${tone}` : ''}`}>{children}</span>;
}

/** A random id for an operation_id or Idempotency-Key (getRandomValues: plain http has no randomUUID). */
export function newId(prefix: string): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return `${prefix}-${Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')}`;
}

export const when = (iso: string | null | undefined): string =>
  iso ? new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' }) : '—';

export const num = (n: number | null | undefined): string => (n == null ? '—' : n.toLocaleString());

/** The x range of a bar chart: half the smallest step (a day when there is one bar) on each side. */
function padded(x: number[], min: number, max: number): [number, number] {
  let step = 86_400;
  for (let i = 1; i < x.length; i += 1) step = Math.min(step, x[i] - x[i - 1] || step);
  return [min - step / 2, max + step / 2];
}

export interface Series {
  label: string;
  values: (number | null)[];
}

/**
 * A line or bar chart (uPlot, canvas) with the same numbers as a table below it: the canvas is
 * for the eye, the table for keyboards and screen readers (the figure is labelled by its title).
 */
export function Chart({
  title,
  x,
  xLabel,
  series,
  bars,
}: {
  title: string;
  /** x values: seconds since the epoch */
  x: number[];
  xLabel: string;
  series: Series[];
  bars?: boolean;
}) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el || x.length === 0) return;
    const width = Math.max(280, Math.min(el.clientWidth || 640, 900));
    const colors = ['#1f5fbf', '#b3261e', '#1e7f3c', '#8a4b00'];
    const plot = new uPlot(
      {
        width,
        height: 220,
        series: [
          {},
          ...series.map((s, i) => ({
            label: s.label,
            stroke: colors[i % colors.length],
            fill: bars ? `${colors[i % colors.length]}55` : undefined,
            width: 2,
            paths: bars ? uPlot.paths.bars!({ size: [0.6, 40] }) : undefined,
          })),
        ],
        axes: [{}, {}],
        // Bars stand half a step inside the plot's edges, not cut in half by them.
        ...(bars
          ? { scales: { x: { time: true, range: (_u: uPlot, min: number, max: number) => padded(x, min, max) } } }
          : {}),
      },
      [x, ...series.map((s) => s.values)] as uPlot.AlignedData,
      el,
    );
    return () => plot.destroy();
  }, [x, series, bars]);
  const id = `chart-${title.replace(/\W+/g, '-').toLowerCase()}`;
  return (
    <figure class="chart" aria-labelledby={id}>
      <figcaption id={id}>{title}</figcaption>
      {x.length === 0 ? <p>No data yet.</p> : <div ref={box} aria-hidden="true" />}
      <details>
        <summary>The numbers</summary>
        <Table
          caption={title}
          rowKey={(i) => String(i)}
          rows={x.map((_, i) => i)}
          columns={[
            { label: xLabel, cell: (i) => when(new Date(x[i] * 1000).toISOString()) },
            ...series.map((s) => ({ label: s.label, num: true, cell: (i: number) => num(s.values[i]) })),
          ]}
        />
      </details>
    </figure>
  );
}

export function Section({
  title,
  children,
  actions,
}: {
  title: string;
  children: ComponentChildren;
  actions?: JSX.Element;
}) {
  return (
    <section class="card">
      <header>
        <h2>{title}</h2>
        {actions}
      </header>
      {children}
    </section>
  );
}
