import { noteChange } from '../core/audit-note.ts';
import { conflict, isDuplicateKey, notFound } from '../core/errors.ts';
import { newId } from '../core/ids.ts';
import type { Tier } from './constants.ts';
import { identitySettings } from './settings.ts';
import {
  insertOrganization,
  insertOrganizationOnce,
  type OrganizationDoc,
  organizationDoc,
  patchOrganization,
} from './store.ts';

export interface OrganizationView {
  organization_id: string;
  name: string;
  tier: Tier;
  created_at: string;
  updated_at: string;
}

function viewOrganization(o: OrganizationDoc): OrganizationView {
  return {
    organization_id: o.organization_id,
    name: o.name,
    tier: o.tier,
    created_at: o.created_at.toISOString(),
    updated_at: o.updated_at.toISOString(),
  };
}

/** The default organization always exists, tier free. */
export async function ensureDefaultOrganization(): Promise<void> {
  await insertOrganizationOnce({
    organization_id: identitySettings().DEFAULT_ORGANIZATION_ID,
    name: 'Default organization',
    tier: 'free',
  });
}

export async function createOrganization(input: {
  organization_id?: string;
  name: string;
  tier: Tier;
}): Promise<OrganizationView> {
  const organization_id = input.organization_id ?? newId('org', 9);
  try {
    return viewOrganization(await insertOrganization({ organization_id, name: input.name, tier: input.tier }));
  } catch (err) {
    if (isDuplicateKey(err)) throw conflict(`Organization already exists: ${organization_id}`);
    throw err;
  }
}

export async function findOrganization(organization_id: string): Promise<OrganizationDoc | null> {
  return organizationDoc(organization_id);
}

export async function getOrganization(organization_id: string): Promise<OrganizationView> {
  const doc = await findOrganization(organization_id);
  if (!doc) throw notFound(`Organization not found: ${organization_id}`);
  return viewOrganization(doc);
}

export async function updateOrganization(
  organization_id: string,
  patch: { name?: string; tier?: Tier },
): Promise<OrganizationView> {
  const before = await findOrganization(organization_id);
  const doc = before && (await patchOrganization(organization_id, patch));
  if (!doc) throw notFound(`Organization not found: ${organization_id}`);
  for (const k of ['name', 'tier'] as const) if (patch[k] !== undefined) noteChange(k, before?.[k] ?? null, doc[k]);
  return viewOrganization(doc);
}
