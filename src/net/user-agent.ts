/**
 * How the service names itself in every HTTP request it makes: to the upstreams an operator
 * configured (providers/http-client.ts, the DoH resolvers) and to user-named sites
 * (safe-http.ts) alike. In net/, below both, so neither layer imports the other for it.
 */
export const USER_AGENT = 'netdiag/2.1.0 (network diagnostics service; +https://github.com/netdiag/netdiag)';
