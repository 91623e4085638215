import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    // Fakes listen on loopback ports; files run in parallel workers, each with its own ports.
    pool: 'forks',
    reporters: ['default'],
  },
});
