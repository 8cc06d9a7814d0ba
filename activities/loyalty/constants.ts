/** Ledger values the edge validates against, kept apart from the schemas so it imports no model. */
export const LEDGER_REASONS = [
  'action',
  'referral',
  'receipt',
  'ticket_scan',
  'redemption',
  'refund',
  'reversal',
  'expiry',
] as const;
export type LedgerReason = (typeof LEDGER_REASONS)[number];
