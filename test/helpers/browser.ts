/**
 * Headless Chromium for browser checks, driven by playwright-core (which never downloads a browser):
 * the system's one, CHROMIUM or else `chromium` on PATH (Debian: `apt-get install chromium`).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

import { type Browser, chromium } from 'playwright-core';

/** A command's absolute path (playwright wants one): itself if it has a slash, else found on PATH. */
function resolveCommand(command: string): string {
  if (command.includes('/')) return path.resolve(command);
  for (const dir of (process.env.PATH ?? '').split(path.delimiter).filter(Boolean)) {
    const file = path.join(dir, command);
    try {
      fs.accessSync(file, fs.constants.X_OK);
      return file;
    } catch {
      // not in this directory
    }
  }
  return command;
}

/** The Chromium executable: CHROMIUM, else the first of the usual names that runs on PATH. */
function findChromium(): string {
  const candidates = [
    process.env.CHROMIUM,
    'chromium',
    'chromium-browser',
    'google-chrome',
    'google-chrome-stable',
  ].filter(Boolean) as string[];
  for (const c of candidates) {
    if (spawnSync(c, ['--version'], { stdio: 'ignore' }).status === 0) return resolveCommand(c);
  }
  throw new Error('No Chromium found: set CHROMIUM or install it (Debian/Ubuntu: apt-get install chromium)');
}

/**
 * Launches headless Chromium, sandboxed unless running as root (Chromium refuses root with its
 * sandbox) or the sandbox cannot start here (a container without user namespaces).
 */
export async function launchBrowser(): Promise<Browser> {
  const executablePath = findChromium();
  const root = process.getuid?.() === 0;
  try {
    return await chromium.launch({ executablePath, headless: true, chromiumSandbox: !root });
  } catch (err) {
    if (root || !/sandboxing failed|No usable sandbox/i.test((err as Error).message)) throw err;
    return chromium.launch({ executablePath, headless: true, chromiumSandbox: false });
  }
}
