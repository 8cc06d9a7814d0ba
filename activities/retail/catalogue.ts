/**
 * Brands, products and venue-product mappings of an organization.
 * Admin writes, key reads; everything is scoped to the caller's organization.
 */
import { conflict, invalid, isDuplicateKey, PlatformError } from '../errors';
import { BarcodeError, parseBarcode, type Barcode } from './barcodes';
import { allocateIds } from './ids';
import { Brand, Product, VenueProduct, type BrandDoc, type ProductDoc, type VenueProductDoc, MAPPING_STATUSES } from './models';
import { brandView, mappingView, productView, type BrandView, type MappingView, type ProductView } from './views';
import { getVenue } from './venues';
import { missing, nameFilter, paged, type Page } from './queries';

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
  const doc = await Brand.create({ _id: id, organization_id, ...input });
  return brandView(doc.toObject());
}

async function brandDoc(organization_id: string, brand_id: number): Promise<BrandDoc> {
  const doc = await Brand.findOne({ _id: brand_id, organization_id }).lean<BrandDoc>();
  if (!doc) throw missing();
  return doc;
}

export const getBrand = async (organization_id: string, brand_id: number) => brandView(await brandDoc(organization_id, brand_id));

export async function updateBrand(organization_id: string, brand_id: number, input: BrandInput): Promise<BrandView> {
  await brandDoc(organization_id, brand_id);
  const doc = await Brand.findOneAndUpdate({ _id: brand_id, organization_id }, { $set: { description: '', logo_url: '', featured: false, featured_rank: 0, ...input } }, { new: true }).lean<BrandDoc>();
  if (!doc) throw missing();
  return brandView(doc);
}

export async function deleteBrand(organization_id: string, brand_id: number): Promise<void> {
  await brandDoc(organization_id, brand_id);
  const products = await Product.countDocuments({ organization_id, brand_id });
  if (products > 0) throw conflict(`Brand ${brand_id} still has ${products} product(s); delete or move them first`);
  await Brand.deleteOne({ _id: brand_id, organization_id });
}

export const listBrands = (organization_id: string, filter: { q?: string; featured?: boolean }, page: Page) =>
  paged<BrandDoc, BrandView>(Brand, { organization_id, ...nameFilter(filter.q), ...(filter.featured === undefined ? {} : { featured: filter.featured }) }, page, brandView);

/** Featured items in the admin's order (featured_rank ascending, then id). */
export async function featuredBrands(organization_id: string, limit: number): Promise<BrandView[]> {
  const docs = await Brand.find({ organization_id, featured: true }).sort({ featured_rank: 1, _id: 1 }).limit(limit).lean<BrandDoc[]>();
  return docs.map(brandView);
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
  const exists = await Brand.exists({ _id: brand_id, organization_id });
  if (!exists) throw invalid('brand_id', `brand ${brand_id} does not exist in this organization`);
}

async function barcodeTaken(organization_id: string, key: string, except?: number): Promise<never | void> {
  const other = await Product.findOne({ organization_id, gtin: key }, { _id: 1 }).lean<{ _id: number }>();
  if (other && other._id !== except) throw conflict(`A product with this barcode already exists (product ${other._id})`);
}

export async function createProduct(organization_id: string, input: ProductInput): Promise<ProductView> {
  const code = barcodeOf(input.barcode);
  await requireBrand(organization_id, input.brand_id);
  if (code) await barcodeTaken(organization_id, code.key);
  const [id] = await allocateIds('product');
  try {
    const doc = await Product.create({ _id: id, organization_id, ...input, barcode: code?.code ?? '', gtin: code?.key ?? `id:${id}` });
    return productView(doc.toObject());
  } catch (err) {
    if (isDuplicateKey(err) && code) await barcodeTaken(organization_id, code.key);
    throw err;
  }
}

async function productDoc(organization_id: string, product_id: number): Promise<ProductDoc> {
  const doc = await Product.findOne({ _id: product_id, organization_id }).lean<ProductDoc>();
  if (!doc) throw missing();
  return doc;
}

export const getProduct = async (organization_id: string, product_id: number) => productView(await productDoc(organization_id, product_id));

export async function updateProduct(organization_id: string, product_id: number, input: ProductInput): Promise<ProductView> {
  await productDoc(organization_id, product_id);
  const code = barcodeOf(input.barcode);
  await requireBrand(organization_id, input.brand_id);
  if (code) await barcodeTaken(organization_id, code.key, product_id);
  const set = { description: '', featured: false, featured_rank: 0, ...input, barcode: code?.code ?? '', gtin: code?.key ?? `id:${product_id}` };
  try {
    const doc = await Product.findOneAndUpdate({ _id: product_id, organization_id }, { $set: set }, { new: true }).lean<ProductDoc>();
    if (!doc) throw missing();
    return productView(doc);
  } catch (err) {
    if (isDuplicateKey(err) && code) await barcodeTaken(organization_id, code.key, product_id);
    throw err;
  }
}

export async function deleteProduct(organization_id: string, product_id: number): Promise<void> {
  await productDoc(organization_id, product_id);
  await VenueProduct.deleteMany({ organization_id, product_id });
  await Product.deleteOne({ _id: product_id, organization_id });
}

export const listProducts = (organization_id: string, filter: { q?: string; brand_id?: number; featured?: boolean }, page: Page) =>
  paged<ProductDoc, ProductView>(
    Product,
    { organization_id, ...nameFilter(filter.q), ...(filter.brand_id === undefined ? {} : { brand_id: filter.brand_id }), ...(filter.featured === undefined ? {} : { featured: filter.featured }) },
    page,
    productView,
  );

export async function brandProducts(organization_id: string, brand_id: number): Promise<ProductView[]> {
  await brandDoc(organization_id, brand_id);
  const docs = await Product.find({ organization_id, brand_id }).sort({ _id: 1 }).lean<ProductDoc[]>();
  return docs.map(productView);
}

export async function featuredProducts(organization_id: string, limit: number): Promise<ProductView[]> {
  const docs = await Product.find({ organization_id, featured: true }).sort({ featured_rank: 1, _id: 1 }).limit(limit).lean<ProductDoc[]>();
  return docs.map(productView);
}

/**
 * The product with this code, `barcode_type` naming how the code asked was read. A wrong check
 * digit still finds the product stored with the same digits; 404 "Resource not found" for an
 * unknown code, 422 only for one no retailer prints.
 */
export async function productByBarcode(organization_id: string, raw: string): Promise<ProductView & { barcode_type: string }> {
  const code = readBarcode(raw);
  const doc = await Product.findOne({ organization_id, gtin: code.key }).lean<ProductDoc>();
  if (!doc) throw missing();
  return { ...productView(doc), barcode_type: code.kind };
}

/** Every product of the organization (receipt matching keeps them in memory per scan). */
export async function organizationProducts(organization_id: string): Promise<ProductView[]> {
  const docs = await Product.find({ organization_id }).lean<ProductDoc[]>();
  return docs.map(productView);
}

// --- venue products ---

export async function mapVenueProduct(organization_id: string, venue_id: number, input: { product_id: number; price: number; status: (typeof MAPPING_STATUSES)[number] }): Promise<MappingView> {
  await getVenue(organization_id, venue_id);
  const product = await Product.exists({ _id: input.product_id, organization_id });
  if (!product) throw invalid('product_id', `product ${input.product_id} does not exist in this organization`);
  const _id = `${venue_id}:${input.product_id}`;
  // One writer per pair in practice (an admin); a lost race leaves one of two equal-shaped rows.
  const doc = await VenueProduct.findOneAndUpdate(
    { _id },
    { $set: { organization_id, venue_id, product_id: input.product_id, price: input.price, status: input.status } },
    { upsert: true, new: true },
  ).lean<VenueProductDoc>();
  if (!doc) throw new PlatformError(500, 'mapping was not stored');
  return mappingView(doc);
}

export interface VenueProductView extends MappingView {
  name: string;
  brand_id: number;
  barcode: string;
}

/** The venue's mapped products with price and status. */
export async function venueProducts(organization_id: string, venue_id: number): Promise<VenueProductView[]> {
  const mappings = await VenueProduct.find({ organization_id, venue_id }).sort({ product_id: 1 }).lean<VenueProductDoc[]>();
  if (!mappings.length) return [];
  const products = await Product.find({ organization_id, _id: { $in: mappings.map((m) => m.product_id) } }).lean<ProductDoc[]>();
  const byId = new Map(products.map((p) => [p._id, p]));
  return mappings.flatMap((m) => {
    const p = byId.get(m.product_id);
    return p ? [{ ...mappingView(m), name: p.name, brand_id: p.brand_id, barcode: p.barcode ?? '' }] : [];
  });
}

export async function deleteVenueMappings(organization_id: string, venue_id: number): Promise<void> {
  await VenueProduct.deleteMany({ organization_id, venue_id });
}
