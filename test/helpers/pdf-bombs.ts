/**
 * Hand-written PDFs holding images that are tiny on disk and huge once decoded (pdf-lib cannot
 * embed a raw FlateDecode image). The zlib stream of N zero bytes is one full-flushed 1 MiB
 * deflate block repeated, so building a 400 MB image costs ~1 MB of memory here, not 400 MB.
 */
import zlib from 'node:zlib';

export function deflatedZeros(n: number): Buffer {
  const CHUNK = 1 << 20;
  // A full flush empties the compressor's window: each chunk compresses to the same bytes.
  const block = (len: number) =>
    zlib.deflateRawSync(Buffer.alloc(len), { level: 9, finishFlush: zlib.constants.Z_FULL_FLUSH });
  const whole = block(CHUNK);
  const parts: Buffer[] = [Buffer.from([0x78, 0xda])];
  for (let i = 0; i < Math.floor(n / CHUNK); i += 1) parts.push(whole);
  if (n % CHUNK) parts.push(block(n % CHUNK));
  parts.push(Buffer.from([0x03, 0x00])); // an empty final block
  const adler = Buffer.alloc(4); // adler-32 of n zeros: a = 1, b = n mod 65521
  adler.writeUInt32BE((((n % 65521) << 16) >>> 0) + 1);
  parts.push(adler);
  return Buffer.concat(parts);
}

const stream = (dict: string, data: Buffer) =>
  Buffer.concat([Buffer.from(`<< ${dict} /Length ${data.length} >>\nstream\n`), data, Buffer.from('\nendstream')]);

/**
 * One 300 × 300 pt page with a line of text and a red bar over a `width` × `height` 8-bit gray
 * image of zeros (black). `as: 'smask'` hides the big image as the soft mask of a 10 × 10 image instead.
 */
export function imageBombPdf(
  width: number,
  height: number,
  opts: { as?: 'image' | 'smask'; text?: string } = {},
): Buffer {
  const text = opts.text ?? 'Quarterly invoice total amount due';
  const big = (extra = '') =>
    stream(
      `/Type /XObject /Subtype /Image /Width ${width} /Height ${height} /ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /FlateDecode${extra}`,
      deflatedZeros(width * height),
    );
  const objects: Buffer[] = [
    Buffer.from('<< /Type /Catalog /Pages 2 0 R >>'),
    Buffer.from('<< /Type /Pages /Kids [3 0 R] /Count 1 >>'),
    Buffer.from(
      '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 300] /Resources << /XObject << /Im0 4 0 R >> /Font << /F1 6 0 R >> >> /Contents 5 0 R >>',
    ),
    opts.as === 'smask'
      ? stream(
          '/Type /XObject /Subtype /Image /Width 10 /Height 10 /ColorSpace /DeviceGray /BitsPerComponent 8 /SMask 7 0 R /Filter /FlateDecode',
          deflatedZeros(100),
        )
      : big(),
    stream(
      '',
      Buffer.from(
        `q 300 0 0 300 0 0 cm /Im0 Do Q\n1 0 0 rg 10 10 120 30 re f\nBT /F1 14 Tf 10 150 Td (${text}) Tj ET\n`,
      ),
    ),
    Buffer.from('<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>'),
  ];
  if (opts.as === 'smask') objects.push(big());
  return assemble(objects);
}

/** Objects 1…n with a cross-reference table; object 1 is the catalog. */
function assemble(objects: Buffer[]): Buffer {
  const out: Buffer[] = [Buffer.from('%PDF-1.4\n')];
  let pos = out[0].length;
  const offsets = objects.map((o, i) => {
    const b = Buffer.concat([Buffer.from(`${i + 1} 0 obj\n`), o, Buffer.from('\nendobj\n')]);
    out.push(b);
    pos += b.length;
    return pos - b.length;
  });
  const xref = `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
  out.push(Buffer.from(`${xref}trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${pos}\n%%EOF\n`));
  return Buffer.concat(out);
}

/** One page whose content stream inflates to `bytes` NUL bytes (whitespace to a PDF parser). */
export function contentBombPdf(bytes: number): Buffer {
  const objects = [
    Buffer.from('<< /Type /Catalog /Pages 2 0 R >>'),
    Buffer.from('<< /Type /Pages /Kids [3 0 R] /Count 1 >>'),
    Buffer.from('<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 300] /Contents 4 0 R >>'),
    stream('/Filter /FlateDecode', deflatedZeros(bytes)),
  ];
  return assemble(objects);
}

/**
 * A slow PDF that stays small in memory: `pages` pages sharing one content stream of `rects`
 * filled rectangles after a line of text (~13 KB on disk). Reading its text parses that stream once per page, so it
 * keeps a PDF reader busy for seconds (200,000 × 50: ~12 s, ~450 MB) without reaching a limit:
 * what a hostile client uploads many of to hold every reader.
 */
export function slowPdf(rects: number, pages = 50): Buffer {
  const kids = Array.from({ length: pages }, (_, i) => `${i + 5} 0 R`).join(' ');
  const objects = [
    Buffer.from('<< /Type /Catalog /Pages 2 0 R >>'),
    Buffer.from(`<< /Type /Pages /Kids [${kids}] /Count ${pages} >>`),
    // a line of text first: the reader finds words and does not send the pages to OCR
    stream(
      '/Filter /FlateDecode',
      zlib.deflateSync(
        Buffer.from(
          `BT /F1 12 Tf 10 280 Td (Slow to read: many small rectangles) Tj ET\n${'1 1 2 2 re f\n'.repeat(rects)}`,
        ),
        { level: 9 },
      ),
    ),
    Buffer.from('<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>'),
  ];
  for (let i = 0; i < pages; i += 1)
    objects.push(
      Buffer.from(
        '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 300] /Resources << /Font << /F1 4 0 R >> >> /Contents 3 0 R >>',
      ),
    );
  return assemble(objects);
}
