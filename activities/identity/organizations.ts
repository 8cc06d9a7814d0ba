import { config } from '../config';
import { conflict, isDuplicateKey, notFound } from '../errors';
import { newId } from '../ids';
import { Organization, type OrganizationDoc, type Tier } from './models';

export interface OrganizationView {
  organization_id: string;
  name: string;
  tier: Tier;
  created_at: string;
  updated_at: string;
}

export function viewOrganization(o: OrganizationDoc): OrganizationView {
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
  const id = config().DEFAULT_ORGANIZATION_ID;
  try {
    await Organization.updateOne(
      { organization_id: id },
      { $setOnInsert: { organization_id: id, name: 'Default organization', tier: 'free' } },
      { upsert: true },
    );
  } catch (err) {
    if (!isDuplicateKey(err)) throw err; // a concurrent starter won the upsert
  }
}

export async function createOrganization(input: { organization_id?: string; name: string; tier: Tier }): Promise<OrganizationView> {
  const organization_id = input.organization_id ?? newId('org', 9);
  try {
    const doc = await Organization.create({ organization_id, name: input.name, tier: input.tier });
    return viewOrganization(doc.toObject());
  } catch (err) {
    if (isDuplicateKey(err)) throw conflict(`Organization already exists: ${organization_id}`);
    throw err;
  }
}

export async function findOrganization(organization_id: string): Promise<OrganizationDoc | null> {
  return Organization.findOne({ organization_id }).lean<OrganizationDoc>();
}

export async function getOrganization(organization_id: string): Promise<OrganizationView> {
  const doc = await findOrganization(organization_id);
  if (!doc) throw notFound(`Organization not found: ${organization_id}`);
  return viewOrganization(doc);
}

export async function updateOrganization(organization_id: string, patch: { name?: string; tier?: Tier }): Promise<OrganizationView> {
  const doc = await Organization.findOneAndUpdate({ organization_id }, { $set: patch }, { new: true }).lean<OrganizationDoc>();
  if (!doc) throw notFound(`Organization not found: ${organization_id}`);
  return viewOrganization(doc);
}
