/**
 * delivered / sent × 100, rounded half up to 2 decimals (2/3 gives 66.67); 0 when nothing was
 * sent. Multiplied before dividing, so 29 of 20,000 is 0.15, not the 0.14 that 29 / 20000 × 10000
 * (14.499999…) would round to: the MCP reports and the console show the same figure.
 */
export function ratePercent(delivered: number, sent: number): number {
  return sent === 0 ? 0 : Math.round((delivered * 10_000) / sent) / 100;
}

/** The rate as a page shows it: null (shown `–`) until something was sent, so 0 % means 0 delivered. */
export function shownRatePercent(delivered: number, sent: number): number | null {
  return sent === 0 ? null : ratePercent(delivered, sent);
}
