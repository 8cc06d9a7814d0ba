import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/setup/global.ts'],
    setupFiles: ['test/setup/wire.ts'],
    // One shared platform (Temporal, MongoDB wire, MinIO, worker, edge) on a 2-core machine:
    // files run one after another so timings stay far from every timeout.
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    reporters: ['default'],
  },
});
