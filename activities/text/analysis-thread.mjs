// Thread that runs the text analysis (and the local embedding) for the worker, so a 500,000-character
// text never holds the event loop that answers workflow tasks, and a job over its time budget can be
// stopped by ending the thread. Plain JS: a thread does not inherit the TypeScript loader.
import { parentPort } from 'node:worker_threads';
import { importBeside } from '../core/import-beside.mjs';

const { analyse } = await importBeside('./analysis.ts', import.meta.url);
const { hashedEmbedding } = await importBeside('../adapters/embeddings.ts', import.meta.url);

parentPort.on('message', ({ text, embed }) => {
  try {
    parentPort.postMessage({ analysis: analyse(text), vector: embed ? hashedEmbedding(text) : undefined });
  } catch (err) {
    parentPort.postMessage({ error: String(err?.stack ?? err) });
  }
});
parentPort.postMessage('ready');
