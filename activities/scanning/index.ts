/** The scanning component's surface: what the edge, the workflows and other components may use. */
export type { ScanRunOpen } from './list.ts';
export { configureScanning, dropScanPlaceholder, listScans, markScanReversed, recordScanStarted } from './list.ts';
export type { VenueMatch } from './matching.ts';
export type { ReadReceipt, ScanProduct, ScanStatus } from './scans.ts';
export { analyseScan, creditScan, mirrorScan, readReceipt, readScanMirror } from './scans.ts';
export { scanningUserData } from './user-data.ts';
