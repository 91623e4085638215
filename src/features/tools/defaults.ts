/**
 * The arguments a tool fills in when its caller leaves them out, so that the first natural
 * call (`global_dns` of a name, `rdap_lookup` of a name or an address) is answered: the REST
 * routes keep them required, and the CLI and the MCP tools fill them here, the same way.
 */
import { isIP } from '../../net/address.js';

/** A global-dns question without a type asks for A, as the site does. */
export const GLOBAL_DNS_DEFAULT_TYPE = 'A';

/** An IP address or a CIDR prefix is an RDAP ip query; anything else a domain. */
export function rdapType(target: string): 'ip' | 'domain' {
  const [address, bits, ...rest] = target.split('/');
  const prefix = bits === undefined || (rest.length === 0 && /^\d{1,3}$/.test(bits));
  return address !== undefined && prefix && isIP(address.replace(/^\[|\]$/g, '')) !== 0 ? 'ip' : 'domain';
}

/**
 * A parameter a tool may be called without: `value` is what the call gets instead; the tool's
 * input schema shows it as not required, with its `default` when it is a constant, or with
 * the rule in its description when it depends on the other arguments.
 */
export interface DefaultedParameter {
  readonly name: string;
  readonly default?: string;
  readonly rule: string;
  value(args: Readonly<Record<string, unknown>>): string | undefined;
}

export const DEFAULTED: Readonly<Record<string, DefaultedParameter>> = {
  global_dns: {
    name: 'type',
    default: GLOBAL_DNS_DEFAULT_TYPE,
    rule: `Default ${GLOBAL_DNS_DEFAULT_TYPE}.`,
    value: () => GLOBAL_DNS_DEFAULT_TYPE,
  },
  rdap_lookup: {
    name: 'type',
    rule: 'Optional: ip when `target` is an IP address (or a CIDR prefix), domain otherwise.',
    value: (args) => (typeof args.target === 'string' ? rdapType(args.target) : undefined),
  },
};

/** The arguments the call lacks (absent or null) and has a default for; the ones given are never changed. */
export function missingDefaults(
  tool: { readonly name: string },
  args: Readonly<Record<string, unknown>>,
): Record<string, string> {
  const parameter = DEFAULTED[tool.name];
  if (parameter === undefined || (args[parameter.name] !== undefined && args[parameter.name] !== null)) {
    return {};
  }
  const value = parameter.value(args);
  return value === undefined ? {} : { [parameter.name]: value };
}
