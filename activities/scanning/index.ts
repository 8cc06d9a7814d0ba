/** The scanning component's surface: what the edge, the workflows and other components may use. */
export { configureScanning, dropScanPlaceholder, listScans, markScanReversed, recordScanStarted } from './list';
export type { ScanRunOpen } from './list';
export type { VenueMatch } from './matching';
export { analyseScan, creditScan, mirrorScan, readReceipt, readScanMirror } from './scans';
export type { ReadReceipt, ScanProduct, ScanStatus } from './scans';
export { scanningUserData } from './user-data';
