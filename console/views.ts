/**
 * Pages are Eta templates in console/views, compiled once and cached. `<%= %>` escapes; the
 * only raw output (`<%~ %>`) is another template's already escaped result, or the server's QR
 * code SVG (console/qr-code.ts).
 */
import { fileURLToPath } from 'node:url';
import { Eta } from 'eta';
import { assetUrl } from './assets.js';
import type { Navigation } from './navigation.js';

const eta = new Eta({
  views: fileURLToPath(new URL('./views', import.meta.url)),
  cache: true,
  autoEscape: true,
  autoTrim: false,
  // Templates read `it.…` only: no `with`, nothing from scope by accident.
  useWith: false,
});

/** What the layout shows around every signed-in page. */
export interface Frame {
  title: string;
  /** Anonymous pages (sign-in, invitations) have no navigation. */
  nav?: Navigation;
  csrf?: string;
  flash?: string;
}

/** `2026-11-23 14:05 UTC`: one unambiguous form on every page, whatever the browser. */
function when(value: Date | null | undefined): string {
  if (!value) return '—';
  return `${value.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

const numbers = new Intl.NumberFormat('en-US');
const count = (value: number | null | undefined) => numbers.format(Number(value ?? 0));

/** The badge class of a batch's status: done, waiting on someone, stopped, or on its way. */
const BATCH_BADGES: Record<string, string> = {
  completed: 'ok',
  paused: 'warn',
  canceled: '',
  scheduled: 'info',
  queued: 'info',
};
const batchBadge = (status: string) => `badge ${BATCH_BADGES[status] ?? ''}`.trim();

export function render(view: string, data: Frame & Record<string, unknown>): string {
  return eta.render(view, { ...data, asset: assetUrl, when, count, batchBadge });
}
