/** retail's part of a user's export and erasure (docs/privacy-components/retail.md). */
import type { UserData } from '../core/user-data.ts';

export const retailUserData: UserData = {
  // Retail holds the organization's catalogue and venues only, nothing per user (receipts are scanning's).
  async export() {
    return { data: {}, files: [] };
  },
  async erase() {
    return {};
  },
};
