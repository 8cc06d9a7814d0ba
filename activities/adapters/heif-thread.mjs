// Worker thread that decodes HEIF/HEIC with heic-decode (WASM libheif). The decode is synchronous
// WASM work of ~0.4 s for a 12 MP photo, so it runs here instead of on the event loop of the
// Temporal worker, which must keep answering workflow tasks meanwhile. Plain JS: worker threads
// do not inherit the TypeScript loader.
import { parentPort } from 'node:worker_threads';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const decodeAll = require('heic-decode').all;

parentPort.on('message', async ({ id, buffer, maxPixels }) => {
  let images;
  try {
    images = await decodeAll({ buffer: new Uint8Array(buffer) });
  } catch (err) {
    parentPort.postMessage({ id, error: { kind: 'corrupt', message: String(err?.message ?? err) } });
    return;
  }
  try {
    const primary = images[0];
    if (!primary?.width || !primary?.height) {
      parentPort.postMessage({ id, error: { kind: 'corrupt', message: 'no dimensions' } });
      return;
    }
    // Checked before decoding: a pixel bomb is refused without allocating its pixels.
    if (primary.width * primary.height > maxPixels) {
      parentPort.postMessage({ id, error: { kind: 'too_large', width: primary.width, height: primary.height } });
      return;
    }
    const { width, height, data } = await primary.decode();
    const out = data.buffer.byteLength === data.byteLength ? data.buffer : data.slice().buffer;
    parentPort.postMessage({ id, width, height, data: out }, [out]);
  } catch (err) {
    parentPort.postMessage({ id, error: { kind: 'corrupt', message: String(err?.message ?? err) } });
  } finally {
    images.dispose();
  }
});
