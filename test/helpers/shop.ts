/** A small shop for scanning tests: one venue, four mapped products, default points. */
import { call, newTenant, type Tenant } from './api.ts';
import type { ReceiptSpec } from './receipts.ts';

export interface Shop {
  t: Tenant;
  venue: { id: number };
  products: Record<string, { id: number }>;
}

/** A grocery with four mapped products; points are the default `purchase` 10 per unit. */
export async function shop(): Promise<Shop> {
  const t = await newTenant();
  const post = async (path: string, json: unknown) => {
    const res = await call('POST', path, { key: t.adminKey, json });
    if (res.status !== 201) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
  const brand = (await post('/retail/admin/brands', { name: 'FreshCo' })).brand;
  const venue = (
    await post('/retail/admin/venues', {
      name: 'Fresh Mart',
      address: '12 Main Street, Springfield',
      latitude: 39.8,
      longitude: -89.64,
    })
  ).venue;
  const products: Shop['products'] = {};
  for (const [name, price] of [
    ['Coca-Cola 330ml', 1.5],
    ['Organic Bananas 1kg', 1.99],
    ['Whole Milk 1L', 1.25],
    ['Sourdough Bread', 3.49],
  ] as const) {
    products[name] = (await post('/retail/admin/products', { name, brand_id: brand.id })).product;
    await post(`/retail/admin/venues/${venue.id}/products`, { product_id: products[name].id, price, status: 'active' });
  }
  return { t, venue, products };
}

export const groceries = (date: string): ReceiptSpec => ({
  merchant: 'Fresh Mart',
  address: '12 Main Street, Springfield',
  date,
  items: [
    { name: 'Coca-Cola 330ml', qty: 2, price: 3.0 },
    { name: 'Organic Bananas 1kg', price: 1.99 },
    { name: 'Whole Milk 1L', price: 1.25 },
    { name: 'Sourdough Bread', price: 3.49 },
  ],
});

export async function balance(t: Tenant, user_id: string): Promise<number> {
  const res = await call('GET', `/loyalty/points/${user_id}`, { key: t.adminKey });
  if (res.status === 404) return 0; // no ledger entry yet
  return res.body.points;
}
