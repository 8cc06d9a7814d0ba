/** The privacy component's surface: a user's data exported and erased (docs/privacy.md). */
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
} from './erasures.ts';
export {
  beginUserExport,
  expireUserExport,
  exportUserPart,
  failUserExport,
  getExport,
  openExportDownload,
  packUserExport,
  requestExport,
} from './exports.ts';
export { configurePrivacy, type PrivacyOwner, type PrivacyRuns, registerUserData } from './registry.ts';
