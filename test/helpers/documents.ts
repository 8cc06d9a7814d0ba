/** Document fixtures made by the tests: PDFs with pdf-lib, DOCX with fflate, and hostile ones. */
import { strToU8, zipSync } from 'fflate';
import { PDFDocument, PDFHexString, PDFName, rgb, StandardFonts } from 'pdf-lib';
import sharp from 'sharp';

export async function pdfWithText(
  lines: string[],
  opts: { pages?: number; title?: string; author?: string; image?: boolean } = {},
): Promise<Buffer> {
  const doc = await PDFDocument.create();
  if (opts.title) doc.setTitle(opts.title);
  if (opts.author) doc.setAuthor(opts.author);
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const png = opts.image
    ? await doc.embedPng(
        await sharp({ create: { width: 120, height: 60, channels: 3, background: { r: 200, g: 30, b: 30 } } })
          .png()
          .toBuffer(),
      )
    : undefined;
  for (let p = 0; p < (opts.pages ?? 1); p += 1) {
    const page = doc.addPage([595, 842]);
    page.drawRectangle({ x: 0, y: 792, width: 595, height: 50, color: rgb(0.1, 0.3, 0.6) });
    if (png) page.drawImage(png, { x: 40, y: 680, width: 120, height: 60 });
    lines.forEach((l, i) => page.drawText(l, { x: 50, y: 640 - i * 20, size: 12, font }));
    page.drawText(`Page ${p + 1}`, { x: 280, y: 30, size: 10, font });
  }
  return Buffer.from(await doc.save());
}

/** A PDF whose only page is a picture of text: a scan, readable by OCR only. */
export async function scannedPdf(image: Buffer): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const png = await doc.embedPng(image);
  const page = doc.addPage([png.width, png.height]);
  page.drawImage(png, { x: 0, y: 0, width: png.width, height: png.height });
  return Buffer.from(await doc.save());
}

/**
 * A PDF with a standard security handler whose user password is not empty: readers must ask
 * for a password (pdf-lib cannot encrypt; an /Encrypt dictionary with a non-matching /U entry is
 * what such a file looks like to a reader).
 */
export async function encryptedPdf(): Promise<Buffer> {
  const doc = await PDFDocument.create();
  doc.addPage([200, 200]);
  const encrypt = doc.context.obj({
    Filter: 'Standard',
    V: 1,
    R: 2,
    Length: 40,
    P: -44,
    O: PDFHexString.of('a'.repeat(64)),
    U: PDFHexString.of('b'.repeat(64)),
  });
  const ref = doc.context.register(encrypt);
  doc.context.trailerInfo.Encrypt = ref;
  doc.context.trailerInfo.ID = doc.context.obj([
    PDFHexString.of('0123456789abcdef0123456789abcdef'),
    PDFHexString.of('0123456789abcdef0123456789abcdef'),
  ]);
  void PDFName;
  return Buffer.from(await doc.save({ useObjectStreams: false }));
}

export async function hugePagePdf(): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const page = doc.addPage([14400, 14400]);
  page.drawRectangle({ x: 0, y: 0, width: 7200, height: 7200, color: rgb(0.8, 0.1, 0.1) });
  return Buffer.from(await doc.save());
}

const xml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');

export function docx(paragraphs: string[], meta: { title?: string; author?: string } = {}): Buffer {
  const body = paragraphs.map((p) => `<w:p><w:r><w:t xml:space="preserve">${xml(p)}</w:t></w:r></w:p>`).join('');
  return Buffer.from(
    zipSync({
      '[Content_Types].xml': strToU8(
        '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>',
      ),
      'word/document.xml': strToU8(
        `<?xml version="1.0"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>${body}</w:body></w:document>`,
      ),
      'docProps/core.xml': strToU8(
        `<?xml version="1.0"?><cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>${xml(meta.title ?? '')}</dc:title><dc:creator>${xml(meta.author ?? '')}</dc:creator></cp:coreProperties>`,
      ),
      'docProps/app.xml': strToU8('<?xml version="1.0"?><Properties><Pages>2</Pages></Properties>'),
    }),
  );
}

/** A DOCX whose document.xml inflates to `mb` megabytes of zeros. */
export function zipBombDocx(mb = 100): Buffer {
  return Buffer.from(
    zipSync({
      '[Content_Types].xml': strToU8('<Types/>'),
      'word/document.xml': [new Uint8Array(mb * 1024 * 1024), { level: 9 }],
    }),
  );
}
