/**
 * netdiag's own DNS engine: iterative resolution from the root (resolver.ts),
 * for the DNSSEC validator and whatever must ask authoritative servers itself.
 * See resolver.ts for the API and docs/architecture.md §3 for the outbound
 * rules every name-server address passes.
 */
export { DNS_PORT } from './exchange.js';
export {
  DEFAULT_QUERY_BUDGET,
  MAX_CNAME_HOPS,
  MAX_DEPTH,
  MAX_NS_LOOKUPS_PER_CUT,
  MAX_TARGET_NX,
} from './request.js';
export { IterativeResolver, type IterativeResolverOptions } from './resolver.js';
export type {
  EngineFinding,
  EngineFindingCode,
  EngineQueryType,
  EngineRecord,
  NameServer,
  QueryLog,
  ResolveOptions,
  ResolveResult,
  ResolveStatus,
  ZoneAnswer,
  ZoneCut,
  ZoneResponse,
} from './types.js';
