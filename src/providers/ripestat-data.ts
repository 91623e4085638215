/**
 * The RIPEstat Data API envelope, shared by every RIPEstat adapter
 * (routing for /api/inspect, maxmind-geo-lite for /api/ip-geo): URL building,
 * the `sourceapp` every call carries, and the envelope checks that turn a
 * RIPEstat "error" answer into an operational failure.
 *
 *   GET {RIPESTAT_URL}/data/<data-call>/data.json?resource=<...>&sourceapp=netdiag
 *
 * Every answer is wrapped in the same envelope (see test/fixtures/ripestat/):
 * `status` ("ok" or "error"), `status_code`, `data_call_name`,
 * `data_call_status` ("supported", "supported - based on 2.1",
 * "deprecated - ...", "development", ...), `messages` ([level, text] pairs)
 * and `data`. https://stat.ripe.net/docs/02.data-api/
 */

import { ProviderError } from '../errors.js';
import { type HttpClient, joinUrl } from './http-client.js';
import type { Provider, ProviderInfo } from './types.js';

/**
 * RIPEstat asks every caller to identify itself with `sourceapp`
 * (https://stat.ripe.net/docs/02.data-api/#data-api-usage), so heavy users can
 * be told apart and contacted instead of blocked.
 */
export const RIPESTAT_SOURCE_APP = 'netdiag';

/** The envelope around every data call's `data`. */
export interface RipestatEnvelope {
  status?: unknown;
  status_code?: unknown;
  data_call_name?: unknown;
  data_call_status?: unknown;
  messages?: unknown;
  data?: unknown;
}

export interface RipestatAnswer {
  /** The data call's `data` object, unchecked beyond being an object: each adapter reads its own fields. */
  data: Record<string, unknown>;
  /** `messages` as [level, text], e.g. ["warning", "Given resource is not announced but ..."]. */
  messages: { level: string; text: string }[];
}

/** `{base}/data/{call}/data.json?{params}&sourceapp=netdiag`; the base may carry a path prefix. */
export function ripestatDataUrl(baseUrl: string, dataCall: string, params: Record<string, string>): string {
  const query = new URLSearchParams({ ...params, sourceapp: RIPESTAT_SOURCE_APP });
  return `${joinUrl(baseUrl, `/data/${encodeURIComponent(dataCall)}/data.json`)}?${query}`;
}

/**
 * Calls one data call and checks its envelope. Throws a ProviderError (so
 * the chain may fall back) for an HTTP status other than 200, an unparseable
 * body, `status` other than "ok", a data call RIPEstat no longer serves, or a
 * missing `data` object.
 */
export async function fetchRipestatData(
  http: HttpClient,
  baseUrl: string,
  dataCall: string,
  params: Record<string, string>,
  opts: { signal: AbortSignal; maxBytes?: number },
): Promise<RipestatAnswer> {
  const url = ripestatDataUrl(baseUrl, dataCall, params);
  const { status, data } = await http.getJson<unknown>(url, {
    signal: opts.signal,
    maxBytes: opts.maxBytes ?? 512 * 1024,
  });
  if (status !== 200) throw new ProviderError('http_status', `HTTP ${status} from RIPEstat ${dataCall}`);
  return checkRipestatEnvelope(data, dataCall);
}

/** What every RIPEstat adapter is: a provider asking data calls about one resource of one base URL. */
export abstract class RipestatAdapter implements Provider {
  readonly info: ProviderInfo;
  readonly #http: HttpClient;
  readonly #baseUrl: string;

  constructor(info: ProviderInfo, http: HttpClient, baseUrl: string) {
    this.info = info;
    this.#http = http;
    this.#baseUrl = baseUrl;
  }

  protected dataCall(
    dataCall: string,
    resource: string,
    opts: { signal: AbortSignal; maxBytes?: number },
  ): Promise<RipestatAnswer> {
    return fetchRipestatData(this.#http, this.#baseUrl, dataCall, { resource }, opts);
  }
}

/** The envelope checks of fetchRipestatData, for a body already parsed. */
export function checkRipestatEnvelope(body: unknown, dataCall: string): RipestatAnswer {
  if (!isObject(body))
    throw new ProviderError('bad_response', `RIPEstat ${dataCall}: answer is not an object`);
  const envelope = body as RipestatEnvelope;
  const messages = parseMessages(envelope.messages);
  if (envelope.status !== 'ok') {
    // An error answer names its cause in an "error" message (e.g. an unknown resource).
    const why = messages.find((m) => m.level === 'error')?.text ?? `status ${String(envelope.status)}`;
    throw new ProviderError('upstream_error', `RIPEstat ${dataCall}: ${why}`);
  }
  const callStatus = envelope.data_call_status;
  // "supported" and "deprecated" calls answer with real data; anything else
  // ("development", "unsupported", ...) is not something to show users as fact.
  if (typeof callStatus === 'string' && !/^(supported|deprecated)\b/i.test(callStatus)) {
    throw new ProviderError('upstream_error', `RIPEstat ${dataCall}: data call status "${callStatus}"`);
  }
  if (!isObject(envelope.data)) {
    throw new ProviderError('bad_response', `RIPEstat ${dataCall}: answer without a data object`);
  }
  return { data: envelope.data, messages };
}

function parseMessages(raw: unknown): { level: string; text: string }[] {
  if (!Array.isArray(raw)) return [];
  const out: { level: string; text: string }[] = [];
  for (const m of raw) {
    if (Array.isArray(m) && typeof m[0] === 'string' && typeof m[1] === 'string') {
      out.push({ level: m[0], text: m[1] });
    }
  }
  return out;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
