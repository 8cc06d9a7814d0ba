/**
 * Retail catalogue: brands, products, venues and their product mappings per organization; admin
 * writes, key reads. Ids are integers; every unknown or foreign item is 404 "Resource not found".
 */
import { z } from 'zod';

import { config } from '../../activities/core/config.ts';
import { invalid } from '../../activities/core/errors.ts';
import {
  DEFAULT_MAPPING_STATUS,
  MAPPING_STATUS_MAX_LENGTH,
  NOT_ON_SALE_STATUSES,
  UNKNOWN_ITEM_KINDS,
} from '../../activities/retail/constants.ts';
import { catalogue, listUnknownItems, venues } from '../../activities/retail/index.ts';
import { organizationFor } from '../auth.ts';
import { answerField, defineRoute, Reply } from '../http.ts';
import { organizationId } from '../schemas.ts';

const tag = 'retail';
const orgQuery = z.object({ organization_id: organizationId });
const intId = z.coerce
  .number({ message: 'must be a positive integer' })
  .int('must be a positive integer')
  .positive('must be a positive integer')
  .max(Number.MAX_SAFE_INTEGER);
const text = (max: number) => z.string().trim().max(max);
const pageQuery = {
  organization_id: organizationId,
  page: z.coerce.number().int().min(1).default(1),
  limit: z.coerce.number().int().min(1).max(100).default(50),
  q: z.string().trim().min(1).max(100).optional().describe('name contains (case-insensitive)'),
};
const flag = z
  .enum(['true', 'false'])
  .transform((v) => v === 'true')
  .optional();
/** A number from the query string: empty or non-numeric text is refused, not read as 0. */
const queryNumber = z.preprocess(
  (v) => (typeof v === 'string' && v.trim() !== '' ? Number(v) : v),
  z.number({ message: 'must be a number' }).finite(),
);

const brandInput = z.object({
  name: text(200).min(1),
  description: text(2000).optional(),
  logo_url: z.union([z.literal(''), z.url({ protocol: /^https?$/ }).max(2000)]).optional(),
  featured: z.boolean().optional().describe('shown by /retail/brands/featured'),
  featured_rank: z.number().int().min(0).max(1_000_000).optional().describe('order among featured items, ascending'),
});
const productInput = z.object({
  name: text(200).min(1),
  brand_id: z.number().int().positive(),
  description: text(2000).optional(),
  barcode: z
    .string()
    .trim()
    .max(64)
    .optional()
    .describe(
      'any printable-ASCII code up to 64 characters; EAN-13, EAN-8, UPC-A, UPC-E and GTIN-14 are normalized and their check digit reported (barcode_check_digit_valid), never refused',
    ),
  featured: z.boolean().optional(),
  featured_rank: z.number().int().min(0).max(1_000_000).optional(),
});
const venueInput = z.object({
  name: text(200).min(1),
  address: text(500).optional(),
  latitude: z.number().min(-90).max(90),
  longitude: z.number().min(-180).max(180),
});
const mappingInput = z.object({
  product_id: z.number().int().positive(),
  price: z.number().min(0).max(1_000_000_000),
  status: z
    .string()
    .trim()
    .min(1, 'must not be empty')
    .max(MAPPING_STATUS_MAX_LENGTH)
    .regex(/^[^\p{Cc}]*$/u, 'must not contain control characters')
    .default(DEFAULT_MAPPING_STATUS)
    .describe(
      `any label, stored and returned as given (e.g. active, available, out_of_stock); ${NOT_ON_SALE_STATUSES.join(', ')} (any case, spaces or hyphens for underscores) mean not on sale now, every other value means on sale`,
    ),
});

const ok = z.literal(true);
const brand = z
  .object({
    id: z.number(),
    name: z.string(),
    description: z.string(),
    logo_url: z.string(),
    featured: z.boolean(),
    featured_rank: z.number(),
  })
  .passthrough();
const product = z
  .object({
    id: z.number(),
    name: z.string(),
    brand_id: z.number(),
    description: z.string(),
    barcode: z.string(),
    barcode_check_digit_valid: z.boolean().nullable(),
    featured: z.boolean(),
  })
  .passthrough();
const venue = z
  .object({ id: z.number(), name: z.string(), address: z.string(), latitude: z.number(), longitude: z.number() })
  .passthrough();
const mapping = z
  .object({ venue_id: z.number(), product_id: z.number(), price: z.number(), status: z.string() })
  .passthrough();
const listMeta = { page: z.number(), limit: z.number(), total: z.number(), has_more: z.boolean() };

/** The catalogue's words (names, descriptions, addresses of venues): the organization's own, recorded as they are in the audit trail. */
const CATALOGUE_FIELDS = ['name', 'description', 'logo_url', 'barcode', 'address'];

/** Create, replace and delete routes of one kind of item. */
function adminRoutes<I>(
  kind: 'brand' | 'product' | 'venue',
  input: z.ZodType<I>,
  view: z.ZodType,
  ops: {
    create: (org: string, input: I) => Promise<unknown>;
    update: (org: string, id: number, input: I) => Promise<unknown>;
    remove: (org: string, id: number) => Promise<void>;
  },
) {
  const plural = `${kind}s`;
  const params = z.object({ [`${kind}_id`]: intId }) as z.ZodType<Record<string, number>>;
  defineRoute({
    method: 'POST',
    paths: [`/retail/admin/${plural}`],
    tag,
    summary: `Creates a ${kind} (admin)`,
    auth: 'admin',
    audit: {
      action: `${kind}.create`,
      target: ({ result }) => ({ type: kind, id: answerField(result, kind, 'id') }),
      keep: CATALOGUE_FIELDS,
    },
    query: orgQuery,
    body: input,
    status: 201,
    ...(kind === 'product' ? { statuses: { 409: 'A product with this barcode exists' } } : {}),
    response: z.object({ success: ok, [kind]: view }),
    handler: async ({ principal, query, body }) =>
      new Reply(201, {
        success: true,
        [kind]: await ops.create(organizationFor(principal, query.organization_id), body),
      }),
  });
  defineRoute({
    method: 'PUT',
    paths: [`/retail/admin/${plural}/:${kind}_id`],
    tag,
    summary: `Replaces a ${kind} (admin); same body as create`,
    auth: 'admin',
    audit: {
      action: `${kind}.update`,
      target: ({ params }) => ({ type: kind, id: params[`${kind}_id`] }),
      keep: CATALOGUE_FIELDS,
    },
    params,
    query: orgQuery,
    body: input,
    ...(kind === 'product' ? { statuses: { 409: 'A product with this barcode exists' } } : {}),
    response: z.object({ success: ok, [kind]: view }),
    handler: async ({ principal, params, query, body }) => ({
      success: true,
      [kind]: await ops.update(organizationFor(principal, query.organization_id), params[`${kind}_id`], body),
    }),
  });
  defineRoute({
    method: 'DELETE',
    paths: [`/retail/admin/${plural}/:${kind}_id`],
    tag,
    summary: `Deletes a ${kind} (admin)${kind === 'brand' ? '; 409 while it has products' : kind === 'venue' ? ' with its product mappings' : ' and its venue mappings'}`,
    auth: 'admin',
    audit: { action: `${kind}.delete`, target: ({ params }) => ({ type: kind, id: params[`${kind}_id`] }) },
    params,
    query: orgQuery,
    ...(kind === 'brand' ? { statuses: { 409: 'The brand still has products' } } : {}),
    response: z.object({ success: ok, message: z.string() }),
    handler: async ({ principal, params, query }) => {
      const id = params[`${kind}_id`];
      await ops.remove(organizationFor(principal, query.organization_id), id);
      return { success: true, message: `${kind[0].toUpperCase()}${kind.slice(1)} ${id} deleted` };
    },
  });
}

adminRoutes('brand', brandInput, brand, {
  create: catalogue.createBrand,
  update: catalogue.updateBrand,
  remove: catalogue.deleteBrand,
});
adminRoutes('product', productInput, product, {
  create: catalogue.createProduct,
  update: catalogue.updateProduct,
  remove: catalogue.deleteProduct,
});
adminRoutes('venue', venueInput, venue, {
  create: venues.createVenue,
  update: venues.updateVenue,
  remove: venues.deleteVenue,
});

defineRoute({
  method: 'POST',
  paths: ['/retail/admin/venues/:venue_id/products'],
  tag,
  summary: 'Maps a product to a venue with its price and status (admin); posting the pair again updates it',
  auth: 'admin',
  audit: {
    action: 'venue_product.map',
    target: ({ params, body }) => ({ type: 'venue_product', id: `${params.venue_id}:${body.product_id}` }),
    keep: ['status'],
  },
  params: z.object({ venue_id: intId }),
  query: orgQuery,
  body: mappingInput,
  status: 201,
  response: z.object({ success: ok, mapping }),
  handler: async ({ principal, params, query, body }) =>
    new Reply(201, {
      success: true,
      mapping: await catalogue.mapVenueProduct(
        organizationFor(principal, query.organization_id),
        params.venue_id,
        body,
      ),
    }),
});

// --- reads (static paths are declared before parameter paths) ---

defineRoute({
  method: 'GET',
  paths: ['/retail/brands/featured'],
  tag,
  summary: 'Featured brands in the admin-set order (featured_rank, then id)',
  auth: 'key',
  query: z.object({ organization_id: organizationId, limit: z.coerce.number().int().min(1).max(100).default(20) }),
  response: z.object({ success: ok, brands: z.array(brand) }),
  handler: async ({ principal, query }) => ({
    success: true,
    brands: await catalogue.featuredBrands(organizationFor(principal, query.organization_id), query.limit),
  }),
});

defineRoute({
  method: 'GET',
  paths: ['/retail/products/featured'],
  tag,
  summary: 'Featured products in the admin-set order (featured_rank, then id)',
  auth: 'key',
  query: z.object({ organization_id: organizationId, limit: z.coerce.number().int().min(1).max(100).default(20) }),
  response: z.object({ success: ok, products: z.array(product) }),
  handler: async ({ principal, query }) => ({
    success: true,
    products: await catalogue.featuredProducts(organizationFor(principal, query.organization_id), query.limit),
  }),
});

defineRoute({
  method: 'GET',
  paths: ['/retail/products/by-barcode/:barcode'],
  tag,
  summary:
    'The product with this barcode (404 "Resource not found" if none); UPC-A and its EAN-13 form (and UPC-E and its UPC-A) find the same product, other codes match as given',
  auth: 'key',
  params: z.object({ barcode: z.string().trim().min(1).max(64) }),
  query: orgQuery,
  response: z.object({ success: ok, product: product.extend({ barcode_type: z.string() }) }),
  handler: async ({ principal, params, query }) => ({
    success: true,
    product: await catalogue.productByBarcode(
      organizationFor(principal, query.organization_id),
      params.barcode,
      principal.user_id,
    ),
  }),
});

defineRoute({
  method: 'GET',
  paths: ['/retail/venues/nearby'],
  tag,
  summary:
    'Venues within radius meters (default 5000, at most NEARBY_MAX_RADIUS_M), nearest first, with distance_m; with barcode or product_id only the venues selling that product, with their price and status (404 for an unknown product)',
  auth: 'key',
  query: z.object({
    organization_id: organizationId,
    latitude: queryNumber.pipe(z.number().min(-90).max(90)),
    longitude: queryNumber.pipe(z.number().min(-180).max(180)),
    radius: queryNumber.pipe(z.number().positive()).default(5000),
    limit: z.coerce.number().int().min(1).max(200).default(50),
    barcode: z
      .string()
      .trim()
      .min(1, 'must not be empty')
      .max(64)
      .optional()
      .describe('only venues selling the product with this barcode (read as /retail/products/by-barcode reads it)'),
    product_id: intId.optional().describe('only venues selling this product'),
  }),
  response: z.object({
    success: ok,
    venues: z.array(
      venue.extend({
        distance_m: z.number(),
        price: z.number().optional().describe("with barcode or product_id: the venue's price of the product"),
        status: z.string().optional().describe("with barcode or product_id: the venue's status of the product"),
      }),
    ),
    radius: z.number(),
    engine: z.string(),
    product_id: z.number().optional().describe('with barcode or product_id: the product asked for'),
  }),
  handler: async ({ principal, query }) => {
    const max = config().NEARBY_MAX_RADIUS_M;
    if (query.radius > max) throw invalid('radius', `must be at most ${max} meters`);
    if (query.barcode !== undefined && query.product_id !== undefined)
      throw invalid('barcode', 'give either barcode or product_id, not both');
    const org = organizationFor(principal, query.organization_id);
    const near = { latitude: query.latitude, longitude: query.longitude, radius: query.radius, limit: query.limit };
    const product =
      query.barcode !== undefined
        ? { barcode: query.barcode }
        : query.product_id !== undefined
          ? { product_id: query.product_id }
          : null;
    if (product) {
      const out = await catalogue.nearbyVenuesCarrying(org, product, near, principal.user_id);
      return { success: true, ...out, radius: query.radius };
    }
    const out = await venues.nearbyVenues(org, near.latitude, near.longitude, near.radius, near.limit);
    return { success: true, venues: out.venues, radius: query.radius, engine: out.engine };
  },
});

defineRoute({
  method: 'GET',
  paths: ['/retail/admin/unknown-items'],
  tag,
  summary:
    'What the catalogue lacks (admin): barcodes looked up that no product has and receipt lines no product matched, most seen first, paginated; filter kind',
  auth: 'admin',
  query: z.object({
    organization_id: organizationId,
    kind: z.enum(UNKNOWN_ITEM_KINDS).optional(),
    page: z.coerce.number().int().min(1).max(10_000).default(1),
    limit: z.coerce.number().int().min(1).max(100).default(50),
  }),
  response: z.object({
    success: ok,
    items: z.array(
      z.object({
        kind: z.enum(UNKNOWN_ITEM_KINDS),
        key: z
          .string()
          .describe(
            'a barcode as its GTIN-14 (14 digits) or `code:<code>` for other codes; a receipt line as its normalized item name',
          ),
        count: z.number().describe('sightings: each person counted once a day per key'),
        first_seen: z.string(),
        last_seen: z.string(),
      }),
    ),
    ...listMeta,
  }),
  handler: async ({ principal, query }) => {
    const { items, ...meta } = await listUnknownItems(
      organizationFor(principal, query.organization_id),
      query.kind,
      query,
    );
    return { success: true, items, ...meta };
  },
});

defineRoute({
  method: 'GET',
  paths: ['/retail/brands'],
  tag,
  summary: "The organization's brands by id, paginated; filters q and featured",
  auth: 'key',
  query: z.object({ ...pageQuery, featured: flag }),
  response: z.object({ success: ok, brands: z.array(brand), ...listMeta }),
  handler: async ({ principal, query }) => {
    const { items, ...meta } = await catalogue.listBrands(
      organizationFor(principal, query.organization_id),
      { q: query.q, featured: query.featured },
      query,
    );
    return { success: true, brands: items, ...meta };
  },
});

defineRoute({
  method: 'GET',
  paths: ['/retail/products'],
  tag,
  summary: "The organization's products by id, paginated; filters q, brand_id and featured",
  auth: 'key',
  query: z.object({ ...pageQuery, featured: flag, brand_id: intId.optional() }),
  response: z.object({ success: ok, products: z.array(product), ...listMeta }),
  handler: async ({ principal, query }) => {
    const { items, ...meta } = await catalogue.listProducts(
      organizationFor(principal, query.organization_id),
      { q: query.q, brand_id: query.brand_id, featured: query.featured },
      query,
    );
    return { success: true, products: items, ...meta };
  },
});

defineRoute({
  method: 'GET',
  paths: ['/retail/venues'],
  tag,
  summary: "The organization's venues by id, paginated; filter q",
  auth: 'key',
  query: z.object(pageQuery),
  response: z.object({ success: ok, venues: z.array(venue), ...listMeta }),
  handler: async ({ principal, query }) => {
    const { items, ...meta } = await venues.listVenues(
      organizationFor(principal, query.organization_id),
      { q: query.q },
      query,
    );
    return { success: true, venues: items, ...meta };
  },
});

defineRoute({
  method: 'GET',
  paths: ['/retail/brands/:brand_id'],
  tag,
  summary: 'One brand',
  auth: 'key',
  params: z.object({ brand_id: intId }),
  query: orgQuery,
  response: z.object({ success: ok, brand }),
  handler: async ({ principal, params, query }) => ({
    success: true,
    brand: await catalogue.getBrand(organizationFor(principal, query.organization_id), params.brand_id),
  }),
});

defineRoute({
  method: 'GET',
  paths: ['/retail/brands/:brand_id/products'],
  tag,
  summary: "The brand's products by id",
  auth: 'key',
  params: z.object({ brand_id: intId }),
  query: orgQuery,
  response: z.object({ success: ok, products: z.array(product) }),
  handler: async ({ principal, params, query }) => ({
    success: true,
    products: await catalogue.brandProducts(organizationFor(principal, query.organization_id), params.brand_id),
  }),
});

defineRoute({
  method: 'GET',
  paths: ['/retail/products/:product_id'],
  tag,
  summary: 'One product',
  auth: 'key',
  params: z.object({ product_id: intId }),
  query: orgQuery,
  response: z.object({ success: ok, product }),
  handler: async ({ principal, params, query }) => ({
    success: true,
    product: await catalogue.getProduct(organizationFor(principal, query.organization_id), params.product_id),
  }),
});

defineRoute({
  method: 'GET',
  paths: ['/retail/venues/:venue_id/details'],
  tag,
  summary:
    'The venue, its products with price and status, and third-party places data (null with places_source "none" when no provider is configured)',
  auth: 'key',
  params: z.object({ venue_id: intId }),
  query: orgQuery,
  response: z.object({
    success: ok,
    venue,
    products: z.array(mapping.extend({ name: z.string(), brand_id: z.number(), barcode: z.string() })),
    places: z.unknown(),
    places_source: z.string(),
    places_cached_at: z
      .string()
      .optional()
      .describe('when the places data was fetched from the provider (absent with places_source "none")'),
    places_error: z
      .string()
      .optional()
      .describe('the provider failed (`unavailable` for a basic key): places is the cached copy, or null'),
  }),
  handler: async ({ principal, params, query }) => {
    const org = organizationFor(principal, query.organization_id);
    const v = await venues.getVenue(org, params.venue_id);
    const [products, places] = await Promise.all([catalogue.venueProducts(org, v.id), venues.venuePlaces(v)]);
    // Why the provider failed (its status, a missing key) is for administrators; a user can only retry later.
    if (places.places_error && principal.level === 0) places.places_error = 'unavailable';
    return { success: true, venue: v, products, ...places };
  },
});
