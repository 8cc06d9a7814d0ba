/** Receipt images rendered from known text (sharp + SVG), so tests know every item and total. */
import sharp from 'sharp';

export interface ReceiptItemSpec {
  name: string;
  qty?: number;
  /** the line's amount */
  price: number;
}

export interface ReceiptSpec {
  merchant: string;
  address: string;
  date: string;
  items: ReceiptItemSpec[];
  /** defaults to the sum of the items */
  total?: number;
  footer?: string;
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export function receiptLines(spec: ReceiptSpec): string[] {
  const total = spec.total ?? spec.items.reduce((s, i) => s + i.price, 0);
  const row = (left: string, amount: number) => `${left.padEnd(30)}${amount.toFixed(2).padStart(9)}`;
  return [
    spec.merchant.toUpperCase(),
    spec.address,
    `Date: ${spec.date} 14:32`,
    '',
    ...spec.items.map((i) => row(`${i.qty && i.qty > 1 ? `${i.qty} x ` : ''}${i.name}`, i.price)),
    '',
    row('TOTAL', total),
    spec.footer ?? 'Thank you for shopping!',
  ];
}

export async function renderReceipt(spec: ReceiptSpec, format: 'png' | 'jpeg' = 'png'): Promise<Buffer> {
  const lines = receiptLines(spec);
  const height = 60 + lines.length * 32;
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="620" height="${height}"><rect width="100%" height="100%" fill="white"/>${lines
    .map(
      (l, i) =>
        `<text x="20" y="${44 + i * 32}" font-family="DejaVu Sans Mono" font-size="20" xml:space="preserve">${esc(l)}</text>`,
    )
    .join('')}</svg>`;
  const img = sharp(Buffer.from(svg));
  return format === 'png' ? img.png().toBuffer() : img.jpeg({ quality: 90 }).toBuffer();
}
