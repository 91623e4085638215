/**
 * commands.ts against the app: each command's positionals and options are exactly its route's
 * parameters (an option not there is refused, so the two must not drift), and the endpoint
 * family it names is the one that serves its route, alone: the in-process app of `netdiag dns`
 * builds no other family and no provider family (issue 31: no GeoIP or relay lists for a DNS
 * question).
 */
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BuildOptions, buildApp } from '../../../src/app.js';
import { commandSpec, optionNames } from '../../../src/cli/commands.js';
import { testConfig } from '../../../src/config/index.js';
import { TOOLS, toolDefinitions } from '../../../src/features/tools/catalog.js';

async function appWith(opts: Pick<BuildOptions, 'features'> = {}): Promise<FastifyInstance> {
  const app = await buildApp(testConfig(), {
    logger: pino({ level: 'silent' }),
    relayLists: 'on-demand',
    ...opts,
  });
  await app.ready();
  return app;
}

describe('netdiag commands and the routes behind them', () => {
  let whole: FastifyInstance;
  beforeAll(async () => {
    whole = await appWith();
  });
  afterAll(async () => {
    await whole?.close();
  });

  it('names, between positionals and options, exactly the parameters of each route', () => {
    const definitions = toolDefinitions(whole);
    expect(definitions.map((d) => d.spec.command).sort()).toEqual(TOOLS.map((t) => t.command).sort());
    for (const d of definitions) {
      expect([...optionNames(commandSpec(d.spec))].sort(), d.spec.command).toEqual(
        Object.keys(d.inputSchema.properties ?? {}).sort(),
      );
    }
  });

  it('builds, for each command, an app with its family alone that serves its route as the whole app does', async () => {
    for (const tool of TOOLS) {
      const app = await appWith({ features: [commandSpec(tool).feature] });
      try {
        expect(
          toolDefinitions(app).map((d) => d.spec.command),
          tool.command,
        ).toContain(tool.command);
        const full = toolDefinitions(whole).find((d) => d.spec.name === tool.name);
        expect(
          toolDefinitions(app).find((d) => d.spec.name === tool.name)?.inputSchema,
          tool.command,
        ).toEqual(full?.inputSchema);
      } finally {
        await app.close();
      }
    }
  });

  it('dns: the DNS route alone, no provider family (no GeoIP, relay lists, RDAP or CT), no /openapi.json', async () => {
    const app = await appWith({ features: ['dns'] });
    try {
      expect(app.routeTable.map((r) => `${r.method} ${r.url}`)).toEqual(['GET /api/dns']);
      for (const family of [
        'ipSources',
        'rdapSources',
        'ctSources',
        'globalDnsProviders',
        'routingProviders',
      ]) {
        expect(app.hasDecorator(family), family).toBe(false);
      }
      expect((await app.inject('/openapi.json')).statusCode).toBe(404);
      const answer = await app.inject('/api/dns?target=example..com');
      expect(answer.statusCode).toBe(400);
    } finally {
      await app.close();
    }
  });
});
