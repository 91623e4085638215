/**
 * How each tool is spelled on the command line: which route parameters its positional
 * arguments fill, and its named options. Everything else about a tool (its route, title,
 * summary) is features/tools/catalog.ts's. Between them the positionals and the options are
 * every parameter of the route (test/unit/cli/args.test.ts holds them equal to the route's
 * schema, so this table cannot drift into a second one); the values are the route's to
 * validate (a 400 naming the parameter). A name not here is a usage error (exit 2).
 */
import type { FeatureName } from '../features/index.js';
import { TOOLS, type ToolSpec } from '../features/tools/catalog.js';

export interface Positional {
  /** The route parameter it fills. */
  param: string;
  /**
   * The parameter a value that is an IP address fills instead (`netdiag blocklists 192.0.2.1` asks
   * `?ip=`, `netdiag blocklists example.com` `?domain=`): a route that takes either.
   */
  ipParam?: string;
  /** As the usage line shows it. */
  label: string;
  optional?: boolean;
}

export interface CommandSpec {
  /** The endpoint family whose route answers it: in-process, the app is built with it alone. */
  feature: FeatureName;
  positionals: readonly Positional[];
  /** Every named option, as the usage line and help show it: name → label of its value. */
  options?: Readonly<Record<string, string>>;
  /**
   * Bare switches that stand for a route parameter's value (`--smtp` is `--service smtp`): the
   * words people type, where the parameter itself is an enumeration of two.
   */
  switches?: Readonly<Record<string, { param: string; value: string }>>;
  /**
   * The parameter whose value is a file's bytes (standard input without one, or `-`), sent as the
   * route's raw body with this content type; the other parameters go in the query.
   */
  file?: { param: string; contentType: string };
  /** At least one of these options must be given: what is missing without them, and the names. */
  oneOf?: { missing: string; options: readonly string[] };
  example: string;
  /** Shows progress from the start: a live measurement that takes seconds. */
  slow?: boolean;
  /** In-process, the answer needs the relay lists loaded (the first run downloads them). */
  relayLists?: boolean;
}

const DOMAIN: Positional = { param: 'domain', label: 'domain' };
const IP: Positional = { param: 'ip', label: 'ip' };

export const COMMANDS: Readonly<Record<string, CommandSpec>> = {
  dns: {
    feature: 'dns',
    positionals: [
      { param: 'target', label: 'name' },
      { param: 'type', label: 'TYPE', optional: true },
    ],
    example: 'netdiag dns example.com MX',
  },
  dnssec: {
    feature: 'dnssec',
    positionals: [
      { param: 'target', label: 'name' },
      { param: 'type', label: 'TYPE', optional: true },
    ],
    example: 'netdiag dnssec example.com DNSKEY',
  },
  email: {
    feature: 'email',
    positionals: [DOMAIN],
    options: { selector: 'name' },
    example: 'netdiag email example.com --selector s1',
  },
  spf: {
    feature: 'spf',
    positionals: [IP],
    options: { sender: 'address', helo: 'name', domain: 'domain' },
    oneOf: { missing: 'the domain whose SPF policy to check', options: ['sender', 'helo', 'domain'] },
    example: 'netdiag spf 192.0.2.1 --sender a@example.com',
  },
  'mail-tls': {
    feature: 'mail-tls',
    positionals: [DOMAIN],
    example: 'netdiag mail-tls example.com',
    slow: true,
  },
  rdap: {
    feature: 'rdap',
    positionals: [{ param: 'target', label: 'domain|ip|cidr' }],
    options: { type: 'domain|ip' },
    example: 'netdiag rdap google.com',
  },
  tls: {
    feature: 'tls',
    positionals: [{ param: 'target', label: 'host' }],
    example: 'netdiag tls example.com',
  },
  'tls-scan': {
    feature: 'tls-scan',
    positionals: [{ param: 'target', label: 'host' }],
    options: { service: 'https|smtp' },
    switches: { smtp: { param: 'service', value: 'smtp' } },
    example: 'netdiag tls-scan example.com --smtp',
    slow: true,
  },
  message: {
    feature: 'message',
    positionals: [{ param: 'message', label: 'FILE', optional: true }],
    options: { ip: 'address', helo: 'name', 'mail-from': 'address' },
    file: { param: 'message', contentType: 'message/rfc822' },
    example: 'netdiag message < mail.eml',
  },
  blocklists: {
    feature: 'blocklists',
    positionals: [{ param: 'domain', ipParam: 'ip', label: 'ip|domain' }],
    example: 'netdiag blocklists example.com',
    slow: true,
  },
  inspect: {
    feature: 'inspect',
    positionals: [{ param: 'target', label: 'host|url' }],
    options: { ip: 'address', 'include-tls': 'true|false' },
    example: 'netdiag inspect example.com',
  },
  certificates: {
    feature: 'ct',
    positionals: [DOMAIN],
    example: 'netdiag certificates example.com',
  },
  subdomains: {
    feature: 'ct',
    positionals: [DOMAIN],
    example: 'netdiag subdomains example.com',
    slow: true,
  },
  'global-dns': {
    feature: 'global-dns',
    positionals: [
      { param: 'target', label: 'name' },
      { param: 'type', label: 'TYPE', optional: true },
    ],
    example: 'netdiag global-dns example.com AAAA',
    slow: true,
  },
  'ip-geo': {
    feature: 'ip',
    positionals: [IP],
    example: 'netdiag ip-geo 192.0.2.1',
    relayLists: true,
  },
  'ip-privacy': {
    feature: 'ip',
    positionals: [IP],
    example: 'netdiag ip-privacy 172.224.226.34',
    relayLists: true,
  },
  'my-ip': {
    feature: 'ip',
    positionals: [],
    example: 'netdiag my-ip',
    relayLists: true,
  },
};

export function commandSpec(tool: ToolSpec): CommandSpec {
  const spec = COMMANDS[tool.command];
  if (spec === undefined) throw new Error(`no command line spelling for ${tool.command}`);
  return spec;
}

/** The route parameters a command takes by name: its options (`-` read as `_`) and its positionals'. */
export function optionNames(spec: CommandSpec): ReadonlySet<string> {
  return new Set([
    ...spec.positionals.flatMap((p) => (p.ipParam ? [p.param, p.ipParam] : [p.param])),
    ...Object.keys(spec.options ?? {}).map((name) => name.replaceAll('-', '_')),
  ]);
}

export function usageLine(tool: ToolSpec): string {
  const spec = commandSpec(tool);
  const positionals = spec.positionals.map((p) => (p.optional ? `[${p.label}]` : `<${p.label}>`));
  const options = Object.entries(spec.options ?? {}).map(([name, value]) => `[--${name} ${value}]`);
  const switches = Object.keys(spec.switches ?? {}).map((name) => `[--${name}]`);
  return ['netdiag', tool.command, ...positionals, ...switches, ...options].join(' ');
}

export const GLOBAL_OPTIONS: readonly [string, string][] = [
  ['--json', "print the API's JSON answer (pretty-printed) and nothing else on stdout"],
  ['--api URL', 'ask the netdiag instance at URL (default: $NETDIAG_API; unset: run in this process)'],
  ['-h, --help', 'this help; `netdiag help <command>` for one command'],
  ['-V, --version', 'the version'],
];

export function helpText(version: string): string {
  const width = Math.max(...TOOLS.map((t) => t.command.length), 'serve'.length);
  const row = (name: string, text: string) => `  ${name.padEnd(width)}  ${text}`;
  return [
    `netdiag ${version}: network diagnostics from the command line`,
    '',
    'Usage: netdiag <command> [target] [options]',
    '',
    'Lookups:',
    ...TOOLS.map((t) => row(t.command, t.title)),
    '',
    'Other commands:',
    row('serve', 'start the HTTP server (as `npm start`: the API, the site and /mcp)'),
    row('mcp', 'mcp --stdio: the lookups as MCP tools over stdin/stdout, for desktop agents'),
    row('help', 'help <command>: usage and an example'),
    '',
    'Options:',
    ...GLOBAL_OPTIONS.map(([name, text]) => `  ${name.padEnd(14)}  ${text}`),
    '',
    'Exit status: 0 an answer; 1 the lookup failed (upstream failure, rate limit, unreachable API);',
    '2 bad input (the route said 400, or the command line is wrong).',
    '',
    'Examples:',
    ...['dns', 'email', 'spf', 'global-dns'].map((c) => `  ${COMMANDS[c]?.example}`),
  ].join('\n');
}

export function commandHelp(tool: ToolSpec): string {
  const spec = commandSpec(tool);
  return [
    `netdiag ${tool.command}: ${tool.title} (${tool.method} ${tool.path})`,
    '',
    `Usage: ${usageLine(tool)} [--json] [--api URL]`,
    '',
    `Example: ${spec.example}`,
    ...(spec.oneOf
      ? ['', `At least one of ${spec.oneOf.options.map((o) => `--${o}`).join(', ')}: ${spec.oneOf.missing}.`]
      : []),
    ...(spec.file
      ? [
          '',
          'Reads the message (RFC 5322: headers and body, or the headers alone) from FILE, or from standard',
          'input without one (or with -). --ip, --helo and --mail-from say who connected to the receiving',
          "server; without them the receiving side's Received header is read.",
        ]
      : []),
    ...(tool.command === 'rdap'
      ? ['', 'The type is inferred: an IP address or CIDR is ip, anything else domain.']
      : []),
    ...(spec.slow
      ? ['', 'A live measurement: it takes seconds, and counts against the expensive rate limit.']
      : []),
    '',
    'The route validates the values (a 400 names the bad one); an option not shown here is refused.',
  ].join('\n');
}
