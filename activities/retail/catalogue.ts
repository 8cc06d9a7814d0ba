/**
 * Brands, products and venue-product mappings of an organization.
 * Admin writes, key reads; everything is scoped to the caller's organization.
 */
import { conflict, invalid, isDuplicateKey, PlatformError } from '../core/errors.ts';
import { type Barcode, BarcodeError, parseBarcode } from './barcodes.ts';
import { isOnSaleStatus, type MappingStatus } from './constants.ts';
import { allocateIds } from './ids.ts';
import { missing, nameFilter, type Page } from './queries.ts';
import { type BrandDoc, brands, mappings, type ProductDoc, products } from './store.ts';
import { barcodeResolved, noteUnknownBarcode } from './unknown-items.ts';
import { getVenue, type NearbyResult, nearbyVenues, organizationVenues } from './venues.ts';
import {
  type BrandView,
  brandView,
  type MappingView,
  mappingView,
  noteViewChanges,
  type ProductView,
  productView,
} from './views.ts';

export interface BrandInput {
  name: string;
  description?: string;
  logo_url?: string;
  featured?: boolean;
  featured_rank?: number;
}
export interface ProductInput {
  name: string;
  brand_id: number;
  description?: string;
  barcode?: string;
  featured?: boolean;
  featured_rank?: number;
}

// --- brands ---

export async function createBrand(organization_id: string, input: BrandInput): Promise<BrandView> {
  const [id] = await allocateIds('brand');
  return brandView(await brands.insert({ _id: id, organization_id, ...input }));
}

async function brandDoc(organization_id: string, brand_id: number): Promise<BrandDoc> {
  const doc = await brands.get(organization_id, brand_id);
  if (!doc) throw missing();
  return doc;
}

export const getBrand = async (organization_id: string, brand_id: number) =>
  brandView(await brandDoc(organization_id, brand_id));

export async function updateBrand(organization_id: string, brand_id: number, input: BrandInput): Promise<BrandView> {
  const before = await brandDoc(organization_id, brand_id);
  const doc = await brands.set(organization_id, brand_id, {
    description: '',
    logo_url: '',
    featured: false,
    featured_rank: 0,
    ...input,
  });
  if (!doc) throw missing();
  noteViewChanges(brandView(before), brandView(doc));
  return brandView(doc);
}

export async function deleteBrand(organization_id: string, brand_id: number): Promise<void> {
  await brandDoc(organization_id, brand_id);
  const count = await products.countOfBrand(organization_id, brand_id);
  if (count > 0) throw conflict(`Brand ${brand_id} still has ${count} product(s); delete or move them first`);
  await brands.remove(organization_id, brand_id);
}

export const listBrands = (organization_id: string, filter: { q?: string; featured?: boolean }, page: Page) =>
  brands.page(
    {
      organization_id,
      ...nameFilter(filter.q),
      ...(filter.featured === undefined ? {} : { featured: filter.featured }),
    },
    page,
    brandView,
  );

/** Featured items in the admin's order (featured_rank ascending, then id). */
export async function featuredBrands(organization_id: string, limit: number): Promise<BrandView[]> {
  return (await brands.featured(organization_id, limit)).map(brandView);
}

// --- products ---

/** 422 naming `barcode` for a code no retailer prints (empty, too long, not printable ASCII). */
function readBarcode(raw: string): Barcode {
  try {
    return parseBarcode(raw);
  } catch (err) {
    if (err instanceof BarcodeError) throw invalid('barcode', err.message);
    throw err;
  }
}

const barcodeOf = (raw: string | undefined) => (raw?.trim() ? readBarcode(raw) : undefined);

async function requireBrand(organization_id: string, brand_id: number): Promise<void> {
  if (!(await brands.exists(organization_id, brand_id)))
    throw invalid('brand_id', `brand ${brand_id} does not exist in this organization`);
}

async function barcodeTaken(organization_id: string, key: string, except?: number): Promise<never | void> {
  const other = await products.byGtin(organization_id, key);
  if (other && other._id !== except)
    throw conflict(`A product with this barcode already exists (product ${other._id})`);
}

export async function createProduct(organization_id: string, input: ProductInput): Promise<ProductView> {
  const code = barcodeOf(input.barcode);
  await requireBrand(organization_id, input.brand_id);
  if (code) await barcodeTaken(organization_id, code.key);
  const [id] = await allocateIds('product');
  try {
    const doc = await products.insert({
      _id: id,
      organization_id,
      ...input,
      barcode: code?.code ?? '',
      gtin: code?.key ?? `id:${id}`,
    });
    if (code) await barcodeResolved(organization_id, code);
    return productView(doc);
  } catch (err) {
    if (isDuplicateKey(err) && code) await barcodeTaken(organization_id, code.key);
    throw err;
  }
}

async function productDoc(organization_id: string, product_id: number): Promise<ProductDoc> {
  const doc = await products.get(organization_id, product_id);
  if (!doc) throw missing();
  return doc;
}

export const getProduct = async (organization_id: string, product_id: number) =>
  productView(await productDoc(organization_id, product_id));

export async function updateProduct(
  organization_id: string,
  product_id: number,
  input: ProductInput,
): Promise<ProductView> {
  const before = await productDoc(organization_id, product_id);
  const code = barcodeOf(input.barcode);
  await requireBrand(organization_id, input.brand_id);
  if (code) await barcodeTaken(organization_id, code.key, product_id);
  const set = {
    description: '',
    featured: false,
    featured_rank: 0,
    ...input,
    barcode: code?.code ?? '',
    gtin: code?.key ?? `id:${product_id}`,
  };
  try {
    const doc = await products.set(organization_id, product_id, set);
    if (!doc) throw missing();
    if (code) await barcodeResolved(organization_id, code);
    noteViewChanges(productView(before), productView(doc));
    return productView(doc);
  } catch (err) {
    if (isDuplicateKey(err) && code) await barcodeTaken(organization_id, code.key, product_id);
    throw err;
  }
}

export async function deleteProduct(organization_id: string, product_id: number): Promise<void> {
  await productDoc(organization_id, product_id);
  await products.remove(organization_id, product_id);
}

export const listProducts = (
  organization_id: string,
  filter: { q?: string; brand_id?: number; featured?: boolean },
  page: Page,
) =>
  products.page(
    {
      organization_id,
      ...nameFilter(filter.q),
      ...(filter.brand_id === undefined ? {} : { brand_id: filter.brand_id }),
      ...(filter.featured === undefined ? {} : { featured: filter.featured }),
    },
    page,
    productView,
  );

export async function brandProducts(organization_id: string, brand_id: number): Promise<ProductView[]> {
  await brandDoc(organization_id, brand_id);
  return (await products.ofBrand(organization_id, brand_id)).map(productView);
}

export async function featuredProducts(organization_id: string, limit: number): Promise<ProductView[]> {
  return (await products.featured(organization_id, limit)).map(productView);
}

/**
 * The product with this code, `barcode_type` naming how the code asked was read. A wrong check
 * digit still finds the product stored with the same digits; 404 "Resource not found" for an
 * unknown code (counted as what the catalogue lacks, once a day per `seen_by`), 422 only for one
 * no retailer prints.
 */
export async function productByBarcode(
  organization_id: string,
  raw: string,
  seen_by: string,
): Promise<ProductView & { barcode_type: string }> {
  const code = readBarcode(raw);
  const doc = await products.byGtin(organization_id, code.key);
  if (!doc) {
    await noteUnknownBarcode(organization_id, code, seen_by);
    throw missing();
  }
  return { ...productView(doc), barcode_type: code.kind };
}

/** Every product of the organization (receipt matching keeps them in memory per scan). */
export async function organizationProducts(organization_id: string): Promise<ProductView[]> {
  return (await products.ofOrganization(organization_id)).map(productView);
}

// --- venue products ---

export async function mapVenueProduct(
  organization_id: string,
  venue_id: number,
  input: { product_id: number; price: number; status: MappingStatus },
): Promise<MappingView> {
  await getVenue(organization_id, venue_id);
  if (!(await products.exists(organization_id, input.product_id)))
    throw invalid('product_id', `product ${input.product_id} does not exist in this organization`);
  const doc = await mappings.upsert({
    organization_id,
    venue_id,
    product_id: input.product_id,
    price: input.price,
    status: input.status,
  });
  if (!doc) throw new PlatformError('internal', 'mapping was not stored');
  return mappingView(doc);
}

export interface VenueProductView extends MappingView {
  name: string;
  brand_id: number;
  barcode: string;
}

/** The venue's mapped products with price and status. */
export async function venueProducts(organization_id: string, venue_id: number): Promise<VenueProductView[]> {
  const mapped = await mappings.ofVenue(organization_id, venue_id);
  if (!mapped.length) return [];
  const byId = new Map(
    (
      await products.byIds(
        organization_id,
        mapped.map((m) => m.product_id),
      )
    ).map((p) => [p._id, p]),
  );
  return mapped.flatMap((m) => {
    const p = byId.get(m.product_id);
    return p ? [{ ...mappingView(m), name: p.name, brand_id: p.brand_id, barcode: p.barcode ?? '' }] : [];
  });
}

/** What catalogue search scores: the organization's brands, products and venues, as answered. */
export async function searchableCatalogue(
  organization_id: string,
): Promise<{ brands: BrandView[]; products: ProductView[]; venues: Awaited<ReturnType<typeof organizationVenues>> }> {
  const [b, p, v] = await Promise.all([
    brands.ofOrganization(organization_id),
    products.ofOrganization(organization_id),
    organizationVenues(organization_id),
  ]);
  return { brands: b.map(brandView), products: p.map(productView), venues: v };
}

export type CarriedProduct = { product_id: number } | { barcode: string };

/**
 * Nearby venues that sell the product (named by id or barcode): those whose mapping to it
 * (POST /retail/admin/venues/{id}/products) has an on-sale status, each with the venue's price and
 * status. The product's mappings come from the {product_id} index, the venues from the same
 * latitude-band search as nearbyVenues, counting only those venues toward `limit`. An unknown
 * product or barcode is 404 "Resource not found" (an unknown barcode is counted as what the
 * catalogue lacks, as a lookup is).
 */
export async function nearbyVenuesCarrying(
  organization_id: string,
  product: CarriedProduct,
  near: { latitude: number; longitude: number; radius: number; limit: number },
  seen_by: string,
): Promise<NearbyResult & { product_id: number; venues: Array<{ price: number; status: string }> }> {
  let doc: ProductDoc | null;
  if ('barcode' in product) {
    const code = readBarcode(product.barcode);
    doc = await products.byGtin(organization_id, code.key);
    if (!doc) await noteUnknownBarcode(organization_id, code, seen_by);
  } else doc = await products.get(organization_id, product.product_id);
  if (!doc) throw missing();
  const selling = new Map(
    (await mappings.ofProduct(organization_id, doc._id))
      .filter((m) => isOnSaleStatus(m.status))
      .map((m) => [m.venue_id, m]),
  );
  if (!selling.size) return { venues: [], engine: 'latitude-bands', product_id: doc._id };
  const out = await nearbyVenues(organization_id, near.latitude, near.longitude, near.radius, near.limit, (id) =>
    selling.has(id),
  );
  return {
    ...out,
    product_id: doc._id,
    venues: out.venues.map((v) => ({ ...v, price: selling.get(v.id)!.price, status: selling.get(v.id)!.status })),
  };
}
