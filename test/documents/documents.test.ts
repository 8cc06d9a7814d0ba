import fs from 'node:fs';

import { strToU8, zipSync } from 'fflate';
import { Client as MinioClient } from 'minio';
import sharp from 'sharp';
import { describe, expect, inject, it } from 'vitest';

import { basicUser, call, fileForm, newTenant } from '../helpers/api.ts';
import { docx, encryptedPdf, hugePagePdf, pdfWithText, scannedPdf, zipBombDocx } from '../helpers/documents.ts';
import { contentBombPdf, imageBombPdf, slowPdf } from '../helpers/pdf-bombs.ts';
import { renderReceipt } from '../helpers/receipts.ts';

async function setup() {
  const t = await newTenant();
  const user = await basicUser(t);
  const conversation_id = (
    await call('POST', '/initialize_session', { key: user.key, json: { user_id: user.user_id } })
  ).body.conversation_id;
  const send = (data: Buffer, name: string) =>
    call('POST', '/process_document', {
      key: user.key,
      form: fileForm({ user_id: user.user_id, session_id: 's1', conversation_id }, { data, name }),
    });
  return { t, user, conversation_id, send };
}

/** Share of thumbnail pixels that are not near-white: a rendered page is not blank. */
async function inked(jpeg: Buffer): Promise<number> {
  const { data, info } = await sharp(jpeg).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  let dark = 0;
  for (let i = 0; i < data.length; i += info.channels) if (data[i] + data[i + 1] + data[i + 2] < 600) dark += 1;
  return dark / (info.width * info.height);
}

const INVOICE = [
  'INVOICE',
  'Invoice number: 2026-0042',
  'Bill to: Ana Lopez',
  'Electricity usage 320 kWh',
  'Subtotal: $110.00',
  'VAT: $10.00',
  'Amount due: $120.00',
  'Due date: 2026-12-01',
  'Payment terms: 30 days',
];

describe('document processing (workflow document:<id>)', () => {
  it('reads a multi-page PDF: metadata, text layer, class, thumbnail; stores the normalized response', async () => {
    const { t, user, conversation_id, send } = await setup();
    const res = await send(
      await pdfWithText(INVOICE, { pages: 3, title: 'Invoice 2026-0042', author: 'Acme Power', image: true }),
      'invoice.pdf',
    );
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data).toMatchObject({
      folder_structure: { folder_name: 'Invoices', category: 'invoices', subcategory: 'utilities' },
      metadata: {
        pages: 3,
        format: 'pdf',
        mime_type: 'application/pdf',
        title: 'Invoice 2026-0042',
        author: 'Acme Power',
        text_source: 'text_layer',
      },
    });
    expect(res.body.data.metadata.size).toMatch(/KB$/);
    expect(res.body.metadata.classification.confidence).toBeGreaterThan(0.7);
    // named by the media id alone: the uploaded file's name stays with the original
    expect(res.body.thumbnail_path).toBe(
      `${t.organization_id}/${user.user_id}/thumbnails/${res.body.metadata.media_id}.jpg`,
    );
    const [, , , filename] = res.body.thumbnail_path.split('/');
    const thumb = await call('GET', `/thumbnail/${user.user_id}/${filename}`, { key: user.key });
    expect(thumb.headers.get('content-type')).toBe('image/jpeg');
    const meta = await sharp(thumb.raw).metadata();
    expect(Math.max(meta.width!, meta.height!)).toBe(256);
    expect(await inked(thumb.raw)).toBeGreaterThan(0.03);
    const stored = await call('GET', `/get_response/${conversation_id}?user_id=${user.user_id}`, { key: user.key });
    expect(stored.body.responses[0]).toMatchObject({
      source: 'document',
      message: expect.stringContaining('Filed under Invoices'),
    });
  });

  it('reads a scanned PDF and a photo with OCR, and classifies them', async () => {
    const { send } = await setup();
    const receipt = await renderReceipt({
      merchant: 'Fresh Mart',
      address: '12 Main Street',
      date: '2026-11-20',
      items: [
        { name: 'Whole Milk 1L', price: 1.25 },
        { name: 'Sourdough Bread', price: 3.49 },
      ],
    });
    const scan = await send(await scannedPdf(receipt), 'scan.pdf');
    expect(scan.status, JSON.stringify(scan.body)).toBe(200);
    expect(scan.body.data).toMatchObject({
      folder_structure: { category: 'receipts', subcategory: 'groceries' },
      metadata: { text_source: 'ocr', ocr_engine: 'tesseract.js', pages: 1 },
    });
    expect(scan.body.metadata.text_excerpt).toContain('Sourdough');
    const photo = await send(
      await sharp({ create: { width: 640, height: 480, channels: 3, background: { r: 30, g: 120, b: 200 } } })
        .jpeg()
        .toBuffer(),
      'beach.jpg',
    );
    expect(photo.body.data).toMatchObject({
      folder_structure: { category: 'photos' },
      metadata: { format: 'jpeg', dimensions: '640x480', pages: 1 },
    });
    const heic = await send(fs.readFileSync(new URL('../fixtures/photo.heic', import.meta.url)), 'IMG_0001.HEIC');
    expect(heic.status, JSON.stringify(heic.body)).toBe(200);
    expect(heic.body.data).toMatchObject({
      folder_structure: { category: 'photos' },
      metadata: { format: 'heic', pages: 1 },
    });
  });

  it('reads DOCX, Markdown, CSV and plain text', async () => {
    const { send } = await setup();
    const contract = await send(
      docx(
        [
          'RENTAL AGREEMENT',
          'This agreement is made between the landlord and the tenant (the parties).',
          'The tenant shall pay rent monthly. Termination requires 60 days notice.',
          'Signature: ____',
        ],
        { title: 'Lease 2026', author: 'Maria Ruiz' },
      ),
      'lease.docx',
    );
    expect(contract.status, JSON.stringify(contract.body)).toBe(200);
    expect(contract.body.data).toMatchObject({
      folder_structure: { category: 'contracts', subcategory: 'rental' },
      metadata: { format: 'docx', title: 'Lease 2026', author: 'Maria Ruiz', pages: 2, text_source: 'file' },
    });
    const md = await send(
      Buffer.from(
        '# Trip notes\n\nBoarding pass for flight IB 3166, seat 14C, gate B22.\nDeparture 10:40, passenger ANA LOPEZ.',
      ),
      'notes.md',
    );
    expect(md.body.data).toMatchObject({
      folder_structure: { category: 'tickets', subcategory: 'travel' },
      metadata: { format: 'md', title: 'Trip notes' },
    });
    const csv = await send(
      Buffer.from(
        'date,description,amount\n2026-11-01,Opening balance,1000\n2026-11-02,Deposit,200\n2026-11-03,Withdrawal,-50\n',
      ),
      'export.csv',
    );
    expect(csv.body.data.metadata.format).toBe('csv');
    const letter = await send(
      Buffer.from('Dear Ana,\n\nThank you for your visit.\n\nYours sincerely,\nLuis'),
      'letter.txt',
    );
    expect(letter.body.data).toMatchObject({ folder_structure: { category: 'letters' }, metadata: { format: 'txt' } });
  });

  it('refuses encrypted, corrupt, empty, hostile and unsupported files with the reason, and survives a huge page', async () => {
    const { send } = await setup();
    const cases: Array<[string, Buffer, string, number, RegExp]> = [
      ['encrypted', await encryptedPdf(), 'secret.pdf', 422, /encrypted/],
      ['corrupt', Buffer.from('%PDF-1.7\n1 0 obj <<>> garbage'), 'broken.pdf', 422, /corrupt or unreadable PDF/],
      ['empty', Buffer.alloc(0), 'empty.pdf', 422, /empty/],
      ['zip bomb', zipBombDocx(100), 'bomb.docx', 422, /zip bomb/],
      [
        'not a document',
        Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0x3e, 0]),
        'tool.pdf',
        400,
        /^Unsupported file type: application\/octet-stream$/,
      ],
      [
        'plain zip',
        Buffer.from(zipSync({ 'notes.txt': strToU8('hello') })),
        'x.docx',
        400,
        /^Unsupported file type: application\/zip$/,
      ],
    ];
    for (const [name, data, file, status, detail] of cases) {
      const res = await send(data, file);
      expect(res.status, `${name}: ${JSON.stringify(res.body)}`).toBe(status);
      expect(res.body.detail, name).toMatch(detail);
    }
    // content decides: a PNG named .pdf is read as the image it is
    const png = await sharp({ create: { width: 50, height: 50, channels: 3, background: '#888' } })
      .png()
      .toBuffer();
    expect((await send(png, 'looks-like.pdf')).body.data.metadata.format).toBe('png');
    const huge = await send(await hugePagePdf(), 'poster.pdf');
    expect(huge.status, JSON.stringify(huge.body)).toBe(200);
    expect(huge.body.data.metadata.pages).toBe(1);
  });

  it('reads a 500-page PDF within the text caps and stays up for the next document', async () => {
    const { send } = await setup();
    const big = await pdfWithText(
      ['Bank statement', 'Account number 12345678', 'Opening balance 1,000.00', 'Closing balance 1,150.00'],
      { pages: 500, title: 'Statement' },
    );
    const res = await send(big, 'statement.pdf');
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data).toMatchObject({
      folder_structure: { category: 'bank_statements' },
      metadata: { pages: 500, format: 'pdf' },
    });
    // text was read from the first 50 pages only
    expect(res.body.data.metadata.word_count).toBeLessThan(50 * 20);
    const next = await send(Buffer.from('Dear Ana,\n\nYours sincerely,\nLuis'), 'after.txt');
    expect(next.status).toBe(200);
  });

  it('generates a first-page thumbnail for PDFs and images alike', async () => {
    const { user } = await setup();
    const gen = (data: Buffer, name: string) =>
      call('POST', '/generate_thumbnail', { key: user.key, form: fileForm({ user_id: user.user_id }, { data, name }) });
    const pdf = await gen(await pdfWithText(INVOICE, { pages: 2 }), 'inv.pdf');
    expect(pdf.status).toBe(200);
    expect(pdf.headers.get('content-type')).toBe('image/jpeg');
    expect(pdf.headers.get('x-thumbnail-path')).toMatch(new RegExp(`/${user.user_id}/thumbnails/`));
    expect(await inked(pdf.raw)).toBeGreaterThan(0.03);
    const img = await gen(
      await sharp({ create: { width: 800, height: 400, channels: 3, background: '#c00' } })
        .png()
        .toBuffer(),
      'red.png',
    );
    expect((await sharp(img.raw).metadata()).width).toBe(256);
    expect((await gen(Buffer.from('%PDF-1.4 nonsense'), 'bad.pdf')).status).toBe(422);
  });
});

describe('PDF decompression bombs (small files that inflate to gigabytes; a 20,000 × 20,000 image is 400 MP, MAX_IMAGE_MEGAPIXELS is 50 here)', () => {
  // Before the fix the image bombs took the worker ~20 s and ~5 GB of memory each (pdfjs inflated
  // and converted the whole image in the worker's own thread) and answered 200 with a black page;
  // the content bomb ~30 s and ~3 GB.
  const LIMIT_MS = 15_000;
  /** The peak resident memory (VmHWM) of this run's worker processes, found by their task queue. */
  const workerPeakBytes = () => {
    const queue = `TEMPORAL_TASK_QUEUE=${inject('platformEnv').TEMPORAL_TASK_QUEUE}\0`;
    let peak = 0;
    for (const pid of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
      try {
        if (!/workers\/worker\.[jt]s\0/.test(fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8'))) continue;
        if (!fs.readFileSync(`/proc/${pid}/environ`, 'utf8').includes(queue)) continue;
        peak = Math.max(
          peak,
          Number(/VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024,
        );
      } catch {
        // gone, or not ours to read
      }
    }
    return peak;
  };
  const timed = async <T>(f: () => Promise<T>) => {
    const t0 = Date.now();
    const out = await f();
    return { out, ms: Date.now() - t0 };
  };

  it('/process_document and /generate_thumbnail read the text and draw the page without the oversized image, quickly', async () => {
    const { user, send } = await setup();
    const pdf = imageBombPdf(20_000, 20_000);
    expect(pdf.length).toBeLessThan(1_000_000);
    const doc = await timed(() => send(pdf, 'bomb.pdf'));
    expect(doc.out.status, JSON.stringify(doc.out.body)).toBe(200);
    expect(doc.out.body.data.metadata).toMatchObject({ pages: 1, format: 'pdf', text_source: 'text_layer' });
    expect(doc.out.body.metadata.text_excerpt).toContain('Quarterly invoice total amount due');
    expect(doc.ms).toBeLessThan(LIMIT_MS);
    const thumb = await timed(() =>
      call('POST', '/generate_thumbnail', {
        key: user.key,
        form: fileForm({ user_id: user.user_id }, { data: pdf, name: 'bomb.pdf' }),
      }),
    );
    expect(thumb.out.status).toBe(200);
    expect(thumb.out.headers.get('content-type')).toBe('image/jpeg');
    // the page is drawn, the 400 MP black image is not: mostly white, with the red bar
    const ink = await inked(thumb.out.raw);
    expect(ink).toBeGreaterThan(0.001);
    expect(ink).toBeLessThan(0.5);
    expect(thumb.ms).toBeLessThan(LIMIT_MS);
    expect(workerPeakBytes()).toBeLessThan(1.5 * 2 ** 30);
  });

  it("stops, quickly and within the child's limits, a PDF whose oversized image is a small image's soft mask (pdfjs does not size-check masks): 422, or the page read without the mask; then reads the next PDF", async () => {
    const { user, send } = await setup();
    const pdf = imageBombPdf(20_000, 20_000, { as: 'smask' });
    expect(pdf.length).toBeLessThan(1_000_000);
    // The child's data limit (ulimit -d) stops the 400 MB mask's allocation. What follows depends on
    // where it fails: a child that dies is a 422; pdfjs catching the failure skips the mask and the
    // page is read and drawn without it (as an oversized image is). Both are bounded and quick; which
    // one differs between the sources under tsx (the child dies) and the build (pdfjs catches it).
    const doc = await timed(() => send(pdf, 'mask.pdf'));
    if (doc.out.status === 422)
      expect(doc.out.body.detail).toMatch(
        /^file: the PDF could not be read within the limits \(.+\): something in it, e.g. an image or mask far over 50 megapixels/,
      );
    else {
      expect(doc.out.status, JSON.stringify(doc.out.body)).toBe(200);
      expect(doc.out.body.data.metadata.pages).toBe(1);
      expect(doc.out.body.thumbnail_path).toBeTruthy();
    }
    expect(doc.ms).toBeLessThan(2 * LIMIT_MS);
    const thumb = await timed(() =>
      call('POST', '/generate_thumbnail', {
        key: user.key,
        form: fileForm({ user_id: user.user_id }, { data: pdf, name: 'mask.pdf' }),
      }),
    );
    expect([200, 422], String(thumb.out.body?.detail)).toContain(thumb.out.status);
    expect(thumb.ms).toBeLessThan(2 * LIMIT_MS);
    // that happened in the PDF child: the worker itself never grew anywhere near the ~5 GB
    const peak = workerPeakBytes();
    expect(peak).toBeGreaterThan(0);
    expect(peak).toBeLessThan(1.5 * 2 ** 30);
    const next = await send(await pdfWithText(INVOICE), 'after.pdf');
    expect(next.status, JSON.stringify(next.body)).toBe(200);
    expect(next.body.data.metadata.text_source).toBe('text_layer');
  });

  it('refuses with 422 a 2 MB PDF whose page content inflates to 2 GB (no image at all), without the worker growing', async () => {
    const { user } = await setup();
    const pdf = contentBombPdf(2_000_000_000);
    expect(pdf.length).toBeLessThan(2_500_000);
    const thumb = await timed(() =>
      call('POST', '/generate_thumbnail', {
        key: user.key,
        form: fileForm({ user_id: user.user_id }, { data: pdf, name: 'blank.pdf' }),
      }),
    );
    expect(thumb.out.status, String(thumb.out.body?.detail)).toBe(422);
    expect(thumb.out.body.detail).toMatch(/^file: the PDF could not be read within the limits \(.+\)/);
    expect(thumb.ms).toBeLessThan(2 * LIMIT_MS);
    expect(workerPeakBytes()).toBeLessThan(1.5 * 2 ** 30);
  });

  it('still draws an image under the limit (5,000 × 5,000, 25 MP)', async () => {
    const { user } = await setup();
    const thumb = await call('POST', '/generate_thumbnail', {
      key: user.key,
      form: fileForm({ user_id: user.user_id }, { data: imageBombPdf(5_000, 5_000), name: 'dark.pdf' }),
    });
    expect(thumb.status).toBe(200);
    expect(await inked(thumb.raw)).toBeGreaterThan(0.9);
  });
});

describe('the PDF reader is no queue one user can block (one reader per user, a bounded queue)', () => {
  it("reads another user's PDF while one user's slow PDFs are read; past the user's two, 503 with Retry-After and nothing stored", async () => {
    const a = await setup();
    const b = await setup();
    // seconds of reading each (a content stream parsed on each of 50 pages), far under every limit
    const slow = slowPdf(80_000);
    const t0 = Date.now();
    const sent = [0, 1, 2].map((i) => a.send(slow, `slow-${i}.pdf`).then((res) => ({ res, at: Date.now() - t0 })));
    await new Promise((r) => setTimeout(r, 1500));
    const other = await b.send(await pdfWithText(INVOICE), 'invoice.pdf');
    const otherAt = Date.now() - t0;
    expect(other.status, JSON.stringify(other.body)).toBe(200);
    expect(other.body.data.folder_structure.category).toBe('invoices');
    const outs = await Promise.all(sent);
    const read = outs.filter((o) => o.res.status === 200);
    const busy = outs.filter((o) => o.res.status === 503);
    expect(
      outs.map((o) => o.res.status).sort(),
      JSON.stringify(outs.map((o) => o.res.body?.detail ?? o.res.body?.data?.metadata)),
    ).toEqual([200, 200, 503]);
    // the other user did not wait behind them: answered before the first of them
    expect(otherAt).toBeLessThan(Math.min(...read.map((o) => o.at)));
    // the refusal: the documents shape, retryable, and the upload is not kept
    expect(busy[0].res.body).toEqual({ detail: 'Temporarily unavailable; try again later' });
    expect(busy[0].res.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
    const e = inject('platformEnv');
    const [host, port] = e.MINIO_ENDPOINT.split(':');
    const minio = new MinioClient({
      endPoint: host,
      port: Number(port),
      useSSL: false,
      accessKey: e.MINIO_ACCESS_KEY,
      secretKey: e.MINIO_SECRET_KEY,
    });
    const originals: string[] = [];
    for await (const o of minio.listObjectsV2(
      e.MINIO_BUCKET,
      `${a.t.organization_id}/${a.user.user_id}/originals/`,
      true,
    ))
      originals.push(o.name!);
    expect(originals).toHaveLength(2);
  });
});

describe('thumbnails without user_id', () => {
  it("are made for the key's own user, basic or admin, and refused for a system admin naming another organization", async () => {
    const t = await newTenant();
    const user = await basicUser(t);
    const png = await sharp({ create: { width: 64, height: 64, channels: 3, background: '#00c' } })
      .png()
      .toBuffer();
    const gen = (key: string, fields: Record<string, string> = {}) =>
      call('POST', '/generate_thumbnail', { key, form: fileForm(fields, { data: png, name: 'blue.png' }) });
    const own = await gen(user.key);
    expect(own.status, own.raw.toString()).toBe(200);
    expect(own.headers.get('x-thumbnail-path')).toMatch(
      new RegExp(`^${t.organization_id}/${user.user_id}/thumbnails/`),
    );
    const admin = await gen(t.adminKey);
    expect(admin.status).toBe(200);
    expect(admin.headers.get('x-thumbnail-path')).toMatch(
      new RegExp(`^${t.organization_id}/${t.admin.user_id}/thumbnails/`),
    );
    const elsewhere = await gen(inject('adminKey'), { organization_id: t.organization_id });
    expect(elsewhere.status).toBe(422);
    expect(elsewhere.body.detail).toMatch(/^user_id/);
  });
});
