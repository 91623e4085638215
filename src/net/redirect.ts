/**
 * The redirect rules every outbound client applies to a Location it is about
 * to follow (docs/architecture.md §3): the target must be an http or https URL
 * and carry no credentials. safe-http.ts applies them to user-named
 * destinations, before its own address and port checks; the plain client for
 * operator-configured upstreams (providers/http-client.ts) applies them too,
 * and refuses a downgrade from https to http besides: a configured upstream
 * has no reason to leave TLS, and the data it serves is trusted.
 */

/** Why a redirect target was refused, or undefined when it may be followed. */
export function redirectRefusal(target: URL, from?: URL): string | undefined {
  if (target.protocol !== 'http:' && target.protocol !== 'https:') {
    return `scheme ${target.protocol.replace(/:$/, '')} is not allowed (only http and https)`;
  }
  if (target.username || target.password) return 'the URL must not carry credentials';
  if (from?.protocol === 'https:' && target.protocol === 'http:') return 'a downgrade from https to http';
  return undefined;
}
