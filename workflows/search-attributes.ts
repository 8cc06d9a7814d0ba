import { defineSearchAttributeKey, type SearchAttributePair, SearchAttributeType } from '@temporalio/common';

/** Custom search attributes every platform workflow carries, so operators find a user's runs. */
export const ORGANIZATION_ID = defineSearchAttributeKey('OrganizationId', SearchAttributeType.KEYWORD);
export const USER_ID = defineSearchAttributeKey('UserId', SearchAttributeType.KEYWORD);
export const COMPONENT = defineSearchAttributeKey('Component', SearchAttributeType.KEYWORD);
/** The request id of the HTTP request that started the run (added by the edge's Temporal client). */
export const REQUEST_ID = defineSearchAttributeKey('RequestId', SearchAttributeType.KEYWORD);

export const SEARCH_ATTRIBUTES = [ORGANIZATION_ID, USER_ID, COMPONENT, REQUEST_ID] as const;

/** The attributes a platform workflow is started with. */
export const platformSearchAttributes = (
  organization_id: string,
  user_id: string,
  component: string,
): SearchAttributePair[] => [
  { key: ORGANIZATION_ID, value: organization_id },
  { key: USER_ID, value: user_id },
  { key: COMPONENT, value: component },
];
