/**
 * Lookups in this process: the app (buildApp on the configuration contract's variables,
 * their defaults being the public providers, the in-process cache and the bundled data), asked
 * through the route itself (features/tools/call-route.ts), so validation, limits and attribution
 * are the server's own. A one-shot command builds it with its tool's endpoint family alone
 * (commands.ts `feature`, BuildOptions.features): `netdiag dns` loads no GeoIP, relay-list,
 * RDAP or CT code; `netdiag mcp` builds every family.
 *
 * Two things differ from `npm start`, both for a one-shot command on a terminal: the app's logs
 * go to stderr at level `error` unless LOG_LEVEL says otherwise (stdout carries the answer, or
 * the MCP protocol), and load shedding is off unless LOAD_SHED_EVENT_LOOP_DELAY_MS is set (the
 * event loop of a process that has just loaded the app is busy by nature, and there is no other
 * client to shed for). A one-shot command opens the app with its relay lists on demand: only
 * the commands that read them (commandSpec's relayLists) start them, so `netdiag dns` downloads
 * no list; `netdiag mcp`, long-lived like the server, starts them when ready. Work the app
 * started in the background is cancelled by close(), which the caller runs before exiting.
 */
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { type BuildOptions, buildApp } from '../app.js';
import { ConfigError, loadConfig } from '../config/index.js';
import { type Caller, callRoute, type RawBody } from '../features/tools/call-route.js';
import { type ToolSpec, toolDefinitions } from '../features/tools/catalog.js';
import { createLogger } from '../logger.js';
import type { Answer } from './answer.js';
import { UsageError } from './args.js';

/** Relay lists not yet loaded after this: the lookup runs anyway, and the route says what is missing. */
const RELAY_LISTS_WAIT_MS = 150_000;
const RELAY_LISTS_POLL_MS = 200;

export interface LocalApp {
  app: FastifyInstance;
  close(): Promise<void>;
}

/**
 * The limits of a process that serves one local user (a CLI command in process, `netdiag mcp
 * --stdio`). A public client's (30 requests and 6 measurements a minute per address) would stop
 * an agent's ordinary session; what is left is a bound on a runaway loop, for the upstream
 * providers' sake. RATE_LIMIT_GENERAL / RATE_LIMIT_EXPENSIVE in the environment still decide.
 */
export const LOCAL_USER_LIMITS = { RATE_LIMIT_GENERAL: '600/60', RATE_LIMIT_EXPENSIVE: '60/60' } as const;

export async function openLocalApp(
  env: Readonly<Record<string, string | undefined>>,
  opts: Required<Pick<BuildOptions, 'relayLists'>> & Pick<BuildOptions, 'features'>,
): Promise<LocalApp> {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig({
      LOG_LEVEL: 'error',
      LOAD_SHED_EVENT_LOOP_DELAY_MS: '0',
      ...LOCAL_USER_LIMITS,
      ...env,
    });
  } catch (err) {
    if (err instanceof ConfigError) throw new UsageError(`invalid configuration: ${err.message}`);
    throw err;
  }
  const logger = createLogger(config, pino.destination({ dest: 2, sync: true }));
  const app = await buildApp(config, { logger, ...opts });
  await app.ready();
  return { app, close: () => app.close() };
}

/** The local process asking: the limiter counts it as 127.0.0.1, as a request from this machine. */
export function localCaller(userAgent: string): Caller {
  return { ip: '127.0.0.1', userAgent };
}

/**
 * Waits while a started relay list has neither a copy nor a failed download to show: the first
 * run has no copy in LIST_CACHE_DIR yet. Later runs load theirs from disk in start().
 */
export async function relayListsSettled(app: FastifyInstance, signal?: AbortSignal): Promise<void> {
  const deadline = Date.now() + RELAY_LISTS_WAIT_MS;
  while (app.ipSources.relays.loading() && Date.now() < deadline && !signal?.aborted) {
    await new Promise((resolve) => setTimeout(resolve, RELAY_LISTS_POLL_MS));
  }
}

export async function askLocal(
  local: LocalApp,
  tool: ToolSpec,
  args: Record<string, unknown>,
  caller: Caller,
  raw?: RawBody,
): Promise<Answer> {
  if (!toolDefinitions(local.app).some((d) => d.spec.name === tool.name)) {
    return {
      status: 404,
      body: {
        error: `${tool.command} is switched off in this configuration (${tool.method} ${tool.path} is not served)`,
      },
      retryAfter: null,
    };
  }
  const { status, body, retryAfter } = await callRoute(local.app, tool, args, caller, raw);
  return { status, body, retryAfter };
}
