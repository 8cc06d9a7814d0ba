/**
 * Finds the local infrastructure binaries (Temporal CLI, FerretDB or mongod, MinIO) and builds the
 * missing ones with the Go toolchain through the Go module proxy. FerretDB is built with the
 * patches in tools/patches, and a FerretDB built without them is rebuilt. `npm start` and
 * `npm test` call ensureBinaries on demand; `npm run setup` runs it alone.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export type BinaryName = 'temporal' | 'mongo' | 'minio';

export interface Binaries {
  temporal?: string;
  /** mongod when present, else ferretdb */
  mongo?: { kind: 'mongod' | 'ferretdb'; path: string };
  minio?: string;
}

export function binDir(): string {
  return process.env.PLATFORM_BIN_DIR || path.join(os.homedir(), '.cache', 'loyalty-platform', 'bin');
}

interface Recipe {
  binary: string;
  version: string;
  /** `go install` a package at a version, or build a package inside a downloaded module */
  install: { goInstall: string } | { module: string; pkg: string; patches?: string };
}

const PATCH_DIR = fileURLToPath(new URL('./patches/', import.meta.url));

// Temporal CLI: later tags carry a replace directive that `go install` refuses.
// FerretDB: `go install …@v1.24.2` asks the proxy for the module's deprecation list, which the
// proxy here refuses, so the module is downloaded and its command built from the module cache,
// with the patches tools/patches/ferretdb-1.24.2-*.patch (each says why) applied in name order.
const RECIPES: Record<'temporal' | 'ferretdb' | 'minio', Recipe> = {
  temporal: {
    binary: 'temporal',
    version: 'v1.5.1',
    install: { goInstall: 'github.com/temporalio/cli/cmd/temporal@v1.5.1' },
  },
  ferretdb: {
    binary: 'ferretdb',
    version: 'v1.24.2',
    install: { module: 'github.com/FerretDB/FerretDB@v1.24.2', pkg: './cmd/ferretdb', patches: 'ferretdb-1.24.2-' },
  },
  // @latest resolved to this pseudo-version when the project was set up; pinned so builds repeat.
  minio: {
    binary: 'minio',
    version: 'v0.0.0-20260212201848-7aac2a2c5b7c',
    install: { goInstall: 'github.com/minio/minio@v0.0.0-20260212201848-7aac2a2c5b7c' },
  },
};

function which(name: string): string | undefined {
  const dirs = [binDir(), ...(process.env.PATH ?? '').split(path.delimiter)];
  for (const dir of dirs) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      if (fs.statSync(candidate).isFile()) return candidate;
    } catch {
      /* not here */
    }
  }
  return undefined;
}

export function findBinaries(): Binaries {
  const mongod = which('mongod');
  const ferret = which('ferretdb');
  return {
    temporal: which('temporal'),
    mongo: mongod ? { kind: 'mongod', path: mongod } : ferret ? { kind: 'ferretdb', path: ferret } : undefined,
    minio: which('minio'),
  };
}

function patchFiles(recipe: Recipe): string[] {
  const prefix = 'patches' in recipe.install ? recipe.install.patches : undefined;
  if (!prefix) return [];
  return fs
    .readdirSync(PATCH_DIR)
    .filter((f) => f.startsWith(prefix) && f.endsWith('.patch'))
    .sort()
    .map((f) => path.join(PATCH_DIR, f));
}

/** What a build is stamped with: the version and a digest of the patches applied to it. */
function buildStamp(recipe: Recipe): string {
  const hash = createHash('sha256');
  for (const file of patchFiles(recipe))
    hash
      .update(`${path.basename(file)}\0`)
      .update(fs.readFileSync(file))
      .update('\0');
  return `${recipe.version} patches:${hash.digest('hex')}\n`;
}

const stampFile = (binary: string) => `${binary}.stamp`;

/** A patched recipe's binary is current only when its stamp names the patches in this checkout. */
function isCurrent(binary: string, recipe: Recipe): boolean {
  if (!patchFiles(recipe).length) return true;
  try {
    return fs.readFileSync(stampFile(binary), 'utf8') === buildStamp(recipe);
  } catch {
    return false;
  }
}

function run(
  cmd: string,
  args: string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv; label: string },
): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let tail = '';
    let lines = 0;
    const onData = (chunk: Buffer) => {
      const text = chunk.toString();
      tail = (tail + text).slice(-4000);
      for (const line of text.split('\n')) {
        if (!line.trim()) continue;
        lines += 1;
        // Visible progress without flooding the terminal: every 25th line of go's output.
        if (lines % 25 === 1) process.stderr.write(`  [${opts.label}] ${line.trim().slice(0, 120)}\n`);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    const started = Date.now();
    const ticker = setInterval(() => {
      process.stderr.write(`  [${opts.label}] still building… ${Math.round((Date.now() - started) / 1000)} s\n`);
    }, 30_000);
    child.on('error', (err) => {
      clearInterval(ticker);
      reject(err);
    });
    child.on('close', (code) => {
      clearInterval(ticker);
      if (code === 0) resolve();
      else reject(new Error(`${cmd} ${args.join(' ')} exited with ${code}:\n${tail}`));
    });
  });
}

async function build(recipe: Recipe): Promise<string> {
  const go = which('go') ?? (fs.existsSync('/usr/local/go/bin/go') ? '/usr/local/go/bin/go' : undefined);
  if (!go) {
    throw new Error(
      `${recipe.binary} is missing and Go is not installed to build it. Put ${recipe.binary} on PATH or in ${binDir()}, ` +
        'give the address of a running server in the environment (TEMPORAL_ADDRESS, MONGODB_URI, MINIO_ENDPOINT), ' +
        'or run the platform with `docker compose up`.',
    );
  }
  const dir = binDir();
  fs.mkdirSync(dir, { recursive: true });
  const env = { ...process.env, GOBIN: dir, GOFLAGS: '-mod=mod', CGO_ENABLED: '0' };
  const patches = patchFiles(recipe);
  const withPatches = patches.length
    ? ` with ${patches.length} patch${patches.length > 1 ? 'es' : ''} from ${path.relative(process.cwd(), PATCH_DIR) || PATCH_DIR}`
    : '';
  process.stderr.write(
    `setup: building ${recipe.binary} ${recipe.version}${withPatches} with ${go} (first time only; can take minutes)\n`,
  );
  if ('goInstall' in recipe.install) {
    await run(go, ['install', '-trimpath', recipe.install.goInstall], { env, label: recipe.binary });
  } else {
    const out = spawnSync(go, ['mod', 'download', '-json', recipe.install.module], { env, encoding: 'utf8' });
    const info = out.stdout ? (JSON.parse(out.stdout) as { Dir?: string; Error?: string }) : {};
    if (out.status !== 0 || !info.Dir)
      throw new Error(`go mod download ${recipe.install.module} failed: ${info.Error ?? out.stderr}`);
    // The module cache is read-only and FerretDB embeds build/version/version.txt, which its
    // release process generates: build from a writable copy with that file written.
    const work = fs.mkdtempSync(path.join(os.tmpdir(), `build-${recipe.binary}-`));
    // Built beside the binary and renamed over it, so a concurrent start never runs half a file.
    const tmp = path.join(dir, `.${recipe.binary}.${process.pid}.tmp`);
    try {
      fs.cpSync(info.Dir, work, { recursive: true });
      spawnSync('chmod', ['-R', 'u+w', work]);
      fs.writeFileSync(path.join(work, 'build', 'version', 'version.txt'), `${recipe.version}\n`);
      // git apply is all or nothing and refuses a patch whose context is not found; the ceiling
      // keeps it from treating an enclosing directory's repository as the tree to patch.
      const gitEnv = { ...process.env, GIT_CEILING_DIRECTORIES: path.dirname(work) };
      for (const patch of patches)
        await run('git', ['apply', '--whitespace=nowarn', patch], {
          env: gitEnv,
          cwd: work,
          label: `${recipe.binary} patch`,
        });
      await run(go, ['build', '-trimpath', '-o', tmp, recipe.install.pkg], { env, cwd: work, label: recipe.binary });
      fs.renameSync(tmp, path.join(dir, recipe.binary));
      if (patches.length) {
        fs.writeFileSync(`${tmp}.stamp`, buildStamp(recipe));
        fs.renameSync(`${tmp}.stamp`, stampFile(path.join(dir, recipe.binary)));
      }
    } finally {
      fs.rmSync(work, { recursive: true, force: true });
      fs.rmSync(tmp, { force: true });
      fs.rmSync(`${tmp}.stamp`, { force: true });
    }
  }
  const built = path.join(dir, recipe.binary);
  if (!fs.existsSync(built)) throw new Error(`building ${recipe.binary} reported success but ${built} is missing`);
  return built;
}

/** Where the offline speech engine (PyPI `pocketsphinx`, with its en-us model) is installed. */
export const pythonDir = () => path.join(path.dirname(binDir()), 'python');
const POCKETSPHINX = 'pocketsphinx==5.1.1';

/**
 * Installs PocketSphinx for `/support/transcribe` with pip (from PyPI) unless it is importable.
 * Optional: without Python the platform runs and transcription answers "not configured".
 */
export async function ensureSpeechEngine(): Promise<string> {
  const env = { ...process.env, PYTHONPATH: pythonDir() };
  if (spawnSync('python3', ['-c', 'import pocketsphinx'], { env, stdio: 'ignore' }).status === 0)
    return 'pocketsphinx ok';
  try {
    await run(
      'python3',
      [
        '-m',
        'pip',
        'install',
        '--disable-pip-version-check',
        '--no-input',
        '--quiet',
        '--root-user-action=ignore',
        '--target',
        pythonDir(),
        POCKETSPHINX,
      ],
      { env, label: 'pocketsphinx' },
    );
    return 'pocketsphinx installed';
  } catch (err) {
    process.stderr.write(
      `setup: could not install ${POCKETSPHINX} with pip (${(err as Error).message.split('\n')[0]}); /support/transcribe will answer "transcription engine not configured" until it is installed into ${pythonDir()}\n`,
    );
    return 'pocketsphinx MISSING (optional)';
  }
}

/**
 * Replaces a FerretDB built without the current patches (or found elsewhere on PATH) with a patched
 * build in the bin directory. If that build fails, the old binary keeps the platform running:
 * correct, but every lookup by _id scans its table.
 */
async function rebuildFerretDB(mongo: NonNullable<Binaries['mongo']>): Promise<string> {
  process.stderr.write(
    `setup: ${mongo.path} is not built with the patches in ${path.relative(process.cwd(), PATCH_DIR) || PATCH_DIR}; rebuilding\n`,
  );
  try {
    mongo.path = await build(RECIPES.ferretdb);
    return 'ferretdb rebuilt';
  } catch (err) {
    process.stderr.write(
      `setup: could not rebuild ferretdb (${(err as Error).message.split('\n')[0]}); using ${mongo.path} unpatched: lookups by _id scan the collection\n`,
    );
    return 'ferretdb UNPATCHED';
  }
}

/** Makes sure every binary in `need` exists, building what is missing; prints a one-line summary. */
export async function ensureBinaries(need: BinaryName[]): Promise<Binaries> {
  const found = findBinaries();
  const summary: string[] = [];
  const failures: string[] = [];
  for (const name of need) {
    try {
      if (name === 'temporal') {
        if (!found.temporal) {
          found.temporal = await build(RECIPES.temporal);
          summary.push('temporal built');
        } else summary.push('temporal ok');
      } else if (name === 'mongo') {
        if (!found.mongo) {
          found.mongo = { kind: 'ferretdb', path: await build(RECIPES.ferretdb) };
          summary.push('ferretdb built');
        } else if (found.mongo.kind === 'ferretdb' && !isCurrent(found.mongo.path, RECIPES.ferretdb)) {
          summary.push(await rebuildFerretDB(found.mongo));
        } else summary.push(`${found.mongo.kind} ok`);
      } else if (name === 'minio') {
        if (!found.minio) {
          found.minio = await build(RECIPES.minio);
          summary.push('minio built');
        } else summary.push('minio ok');
      }
    } catch (err) {
      failures.push(`${name}: ${(err as Error).message}`);
      summary.push(`${name} MISSING`);
    }
  }
  if (need.length) summary.push(await ensureSpeechEngine());
  if (need.length) process.stderr.write(`setup: ${summary.join(', ')} (binaries in ${binDir()})\n`);
  if (failures.length) throw new Error(`setup failed:\n${failures.join('\n')}`);
  return found;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  ensureBinaries(['temporal', 'mongo', 'minio']).catch((err) => {
    process.stderr.write(`${(err as Error).message}\n`);
    process.exit(1);
  });
}
