// Child process that reads PDFs for the worker (see pdfInChild in pdf.ts). pdfjs decodes every
// stream it meets in full and in the thread that calls it; here a hostile file (an image, soft
// mask or content stream that inflates to gigabytes) hits this process's memory cap (ulimit -d,
// set by the parent) or the parent's time limit, and only this process dies. One job at a time.
// Plain JS: a child does not inherit the parent's TypeScript loader.
import { importBeside } from '../core/import-beside.mjs';

const { runPdfJob } = await importBeside('./pdf.ts', import.meta.url);

process.on('disconnect', () => process.exit(0)); // the worker is gone
process.on('message', async ({ id, pdf, job }) => {
  try {
    const result = await runPdfJob(Buffer.from(pdf.buffer, pdf.byteOffset, pdf.byteLength), job);
    process.send({ id, result });
  } catch (err) {
    process.send({ id, error: { kind: err?.kind, message: String(err?.message ?? err), field: err?.field } });
  }
});
process.send({ ready: true });
