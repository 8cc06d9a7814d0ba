// The npm registry reachable from this workplace serves only the linux-x64 builds of packages
// that ship one native build per platform (@rollup/rollup-*, @swc/core-*), so `npm install`
// here leaves them out of package-lock.json and `npm ci` then refuses the lockfile.
// This adds the missing optional entries with the os/cpu/libc their names state, so `npm ci`
// skips them on other platforms and installs them where they match. Run after `npm install`:
//   node .ci/fix-lockfile.mjs
import fs from 'node:fs';

const file = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(fs.readFileSync(file, 'utf8'));
const pkgs = lock.packages;
const OS = ['android', 'darwin', 'freebsd', 'linux', 'openbsd', 'openharmony', 'win32', 'sunos', 'aix', 'netbsd'];
const CPU = {
  arm64: 'arm64',
  x64: 'x64',
  ia32: 'ia32',
  arm: 'arm',
  loong64: 'loong64',
  ppc64: 'ppc64',
  riscv64: 'riscv64',
  s390x: 's390x',
};

function platformOf(name) {
  const parts = name.split('/').pop().split('-');
  const os = parts.find((p) => OS.includes(p));
  const cpu = parts.map((p) => CPU[p]).find(Boolean);
  if (!os || !cpu) return undefined;
  const tail = parts.slice(parts.indexOf(os) + 1).join('-');
  const libc = os === 'linux' ? (/musl/.test(tail) ? ['musl'] : /gnu/.test(tail) ? ['glibc'] : undefined) : undefined;
  return { os: [os], cpu: [cpu], ...(libc ? { libc } : {}) };
}

let added = 0;
for (const [path, meta] of Object.entries(pkgs)) {
  for (const [dep, spec] of Object.entries(meta.optionalDependencies ?? {})) {
    const key = `node_modules/${dep}`;
    if (pkgs[key] || pkgs[`${path}/${key}`]) continue;
    if (!/^\d+\.\d+\.\d+(-[\w.]+)?$/.test(spec)) continue; // only exact pins are safe to record
    const platform = platformOf(dep);
    if (!platform) continue;
    pkgs[key] = { version: spec, ...platform, license: meta.license ?? 'MIT', optional: true };
    added += 1;
  }
}
const sorted = Object.fromEntries(
  Object.entries(pkgs).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))),
);
lock.packages = sorted;
fs.writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`fix-lockfile: added ${added} optional platform entries`);
