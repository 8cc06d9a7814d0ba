/** The privacy component's surface: a user's data exported and erased (docs/privacy.md). */
export { EXPORT_STATUSES, ERASURE_STATUSES, type Requester } from './constants.ts';
export { configurePrivacy, registerUserData, type PrivacyOwner, type PrivacyRuns } from './registry.ts';
export {
  beginUserExport,
  exportUserPart,
  expireUserExport,
  failUserExport,
  getExport,
  openExportDownload,
  packUserExport,
  requestExport,
  type ExportView,
} from './exports.ts';
export {
  beginUserErasure,
  eraseUserPart,
  finishUserErasure,
  getErasure,
  LAST_PART,
  purgeUserRuns,
  requestErasure,
  stopUserRuns,
  takeErasurePlace,
  type ErasureView,
} from './erasures.ts';
