/** The privacy component's surface: a user's data exported and erased (docs/privacy.md). */
export { ERASURE_STATUSES, EXPORT_STATUSES, type Requester } from './constants.ts';
export {
  beginUserErasure,
  eraseUserPart,
  type ErasureView,
  finishUserErasure,
  getErasure,
  LAST_PART,
  purgeUserRuns,
  requestErasure,
  stopUserRuns,
  takeErasurePlace,
} from './erasures.ts';
export {
  beginUserExport,
  expireUserExport,
  exportUserPart,
  type ExportView,
  failUserExport,
  getExport,
  openExportDownload,
  packUserExport,
  requestExport,
} from './exports.ts';
export { configurePrivacy, type PrivacyOwner, type PrivacyRuns, registerUserData } from './registry.ts';
