// Run by the Dockerfile on `npm ci --omit=dev`'s node_modules: removes what the running platform
// never loads. Plain JS (the image's dependency stage has node and nothing else).
//  - @temporalio/core-bridge ships its native library for five platforms (~28 MB each) and the
//    Rust sources: only this machine's library stays.
//  - source maps and TypeScript declarations of dependencies.
// usage: node tools/prune-runtime.mjs <node_modules>
import fs from 'node:fs';
import path from 'node:path';

const modules = path.resolve(process.argv[2] ?? 'node_modules');
const bytesOf = (p) => {
  const st = fs.lstatSync(p);
  if (!st.isDirectory()) return st.size;
  return fs.readdirSync(p).reduce((n, e) => n + bytesOf(path.join(p, e)), 0);
};
let freed = 0;
const remove = (p) => {
  if (!fs.existsSync(p)) return;
  freed += bytesOf(p);
  fs.rmSync(p, { recursive: true, force: true });
};

// The SDK loads releases/<arch>-<vendor>-<os>-<abi>/index.node for the running platform.
const TRIPLES = {
  'x64-linux': 'x86_64-unknown-linux-gnu',
  'arm64-linux': 'aarch64-unknown-linux-gnu',
  'x64-darwin': 'x86_64-apple-darwin',
  'arm64-darwin': 'aarch64-apple-darwin',
  'x64-win32': 'x86_64-pc-windows-msvc',
};
const bridge = path.join(modules, '@temporalio/core-bridge');
const keep = TRIPLES[`${process.arch}-${process.platform}`];
if (keep && fs.existsSync(path.join(bridge, 'releases', keep))) {
  for (const triple of fs.readdirSync(path.join(bridge, 'releases')))
    if (triple !== keep) remove(path.join(bridge, 'releases', triple));
  for (const dir of ['sdk-core', 'src', 'bridge-macros', 'scripts', 'Cargo.toml', 'Cargo.lock'])
    remove(path.join(bridge, dir));
}

const walk = (dir) => {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) walk(p);
    else if (
      e.isFile() &&
      (e.name.endsWith('.map') || e.name.endsWith('.d.ts') || e.name.endsWith('.d.mts') || e.name.endsWith('.d.cts'))
    )
      remove(p);
  }
};
walk(modules);
process.stdout.write(
  `prune-runtime: ${(freed / 2 ** 20).toFixed(0)} MiB removed from ${modules} (kept ${keep ?? 'every'} Temporal native library)\n`,
);
