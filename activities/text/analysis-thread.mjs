// Thread that runs the text analysis (and the local embedding) for the worker, so a 500,000-character
// text never holds the event loop that answers workflow tasks, and a job over its time budget can be
// stopped by ending the thread. Plain JS: a thread does not inherit the TypeScript loader. Built
// (dist/), the compiled .js sits beside this file; from the sources it is loaded through tsx's API.
import { existsSync } from 'node:fs';
import { parentPort } from 'node:worker_threads';

async function load(file) {
  const compiled = new URL(file.replace(/\.ts$/, '.js'), import.meta.url);
  if (existsSync(compiled)) return import(compiled.href);
  const { tsImport } = await import('tsx/esm/api');
  return tsImport(file, import.meta.url);
}

const { analyse } = await load('./analysis.ts');
const { hashedEmbedding } = await load('../engines/embeddings.ts');

parentPort.on('message', ({ text, embed }) => {
  try {
    parentPort.postMessage({ analysis: analyse(text), vector: embed ? hashedEmbedding(text) : undefined });
  } catch (err) {
    parentPort.postMessage({ error: String(err?.stack ?? err) });
  }
});
parentPort.postMessage('ready');
