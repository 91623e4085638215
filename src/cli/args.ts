/**
 * The command line → what to run. node:util parseArgs splits the tokens; the CLI's own options
 * are declared, and a command's named options (`--name value`, `--name=value`, or a bare
 * `--flag` meaning true) are route parameters, `-` read as `_` (`--include-tls` is
 * include_tls). Which names a command takes is commands.ts's table (a test holds it equal to
 * the route's schema); any other name is a usage error, never silently dropped.
 */
import { parseArgs } from 'node:util';
import { type ToolSpec, toolForCommand } from '../features/tools/catalog.js';
import { missingDefaults } from '../features/tools/defaults.js';
import { isIP } from '../net/address.js';
import { COMMANDS, commandSpec, optionNames } from './commands.js';

// The inference is the tools' own (MCP fills the same defaults); the unit tests read it here.
export { rdapType } from '../features/tools/defaults.js';

/** A mistake on the command line: exit status 2, with the message and a pointer to help. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
  constructor(
    message: string,
    readonly command?: string,
  ) {
    super(message);
  }
}

export interface GlobalFlags {
  json: boolean;
  api: string | undefined;
  help: boolean;
  version: boolean;
  stdio: boolean;
}

export type Invocation =
  | { kind: 'help'; topic: string | undefined; flags: GlobalFlags }
  | { kind: 'version'; flags: GlobalFlags }
  | { kind: 'serve'; flags: GlobalFlags }
  | { kind: 'mcp'; flags: GlobalFlags }
  | { kind: 'tool'; tool: ToolSpec; args: Record<string, string | string[]>; flags: GlobalFlags };

const OPTIONS = {
  json: { type: 'boolean' },
  api: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'V' },
  stdio: { type: 'boolean' },
} as const;

/** Bare switches (`--smtp`) never take the word after them as a value: `--smtp example.com` scans example.com. */
const SWITCHES = new Set(Object.values(COMMANDS).flatMap((spec) => Object.keys(spec.switches ?? {})));

function paramName(option: string): string {
  return option.replaceAll('-', '_');
}

function add(params: Record<string, string | string[]>, name: string, value: string): void {
  const had = params[name];
  params[name] = had === undefined ? value : [...[had].flat(), value];
}

/** Edits (insert, delete, substitute) from a to b: a near miss is one or two. */
function distance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) {
      next[j] = Math.min(
        (row[j] ?? 0) + 1,
        (next[j - 1] ?? 0) + 1,
        (row[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
    row = next;
  }
  return row[b.length] ?? 0;
}

function optionText(param: string): string {
  return `--${param.replaceAll('_', '-')}`;
}

function unknownOption(param: string, known: ReadonlySet<string>): string {
  const near = [...known].find((k) => distance(param, k) <= 2);
  return `unknown option ${optionText(param)}${near === undefined ? '' : ` (did you mean ${optionText(near)}?)`}`;
}

export function parseCommandLine(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): Invocation {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: [...argv],
      options: OPTIONS,
      strict: false,
      allowPositionals: true,
      tokens: true,
    });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const tokens = parsed.tokens ?? [];
  const flags: GlobalFlags = {
    json: parsed.values.json === true,
    api: typeof parsed.values.api === 'string' ? parsed.values.api : env.NETDIAG_API || undefined,
    help: parsed.values.help === true,
    version: parsed.values.version === true,
    stdio: parsed.values.stdio === true,
  };
  if (parsed.values.api === true) throw new UsageError('--api needs a URL: --api https://netdiag.example');

  // Route parameters: every undeclared option, with the positional after it as its value.
  const params: Record<string, string | string[]> = {};
  const positionals: string[] = [];
  const taken = new Set<number>();
  for (const [i, token] of tokens.entries()) {
    if (taken.has(i)) continue;
    if (token.kind === 'positional') positionals.push(token.value);
    if (token.kind !== 'option' || token.name in OPTIONS) continue;
    const next = tokens[i + 1];
    if (token.inlineValue === true) {
      add(params, paramName(token.name), token.value ?? '');
    } else if (next?.kind === 'positional' && !SWITCHES.has(token.name)) {
      taken.add(i + 1);
      add(params, paramName(token.name), next.value);
    } else {
      add(params, paramName(token.name), 'true');
    }
  }

  const [command, ...rest] = positionals;
  if (flags.version) return { kind: 'version', flags };
  if (command === undefined || command === 'help') return { kind: 'help', topic: rest[0], flags };
  if (flags.help) return { kind: 'help', topic: command, flags };
  if (command === 'serve' || command === 'mcp') {
    if (rest.length > 0 || Object.keys(params).length > 0) {
      throw new UsageError(
        `${command} takes no arguments${command === 'mcp' ? ' but --stdio' : ''}`,
        command,
      );
    }
    if (command === 'mcp' && !flags.stdio) {
      throw new UsageError(
        'mcp needs --stdio (the MCP tools over stdin/stdout); over HTTP the server answers at /mcp (netdiag serve)',
        command,
      );
    }
    return { kind: command, flags };
  }
  const tool = toolForCommand(command);
  if (tool === undefined) throw new UsageError(`unknown command: ${command}`);
  const spec = commandSpec(tool);
  if (rest.length > spec.positionals.length) {
    throw new UsageError(`too many arguments: ${rest.slice(spec.positionals.length).join(' ')}`, command);
  }
  const args: Record<string, string | string[]> = {};
  spec.positionals.forEach((p, i) => {
    const value = rest[i];
    if (value !== undefined) args[p.ipParam && isIP(value) !== 0 ? p.ipParam : p.param] = value;
    else if (!p.optional && params[p.param] === undefined && (!p.ipParam || params[p.ipParam] === undefined))
      throw new UsageError(`missing <${p.label}>`, command);
  });
  const known = optionNames(spec);
  for (const [name, { param, value }] of Object.entries(spec.switches ?? {})) {
    if (params[name] === undefined) continue;
    if (params[name] !== 'true') throw new UsageError(`--${name} takes no value`, command);
    if (params[param] !== undefined) throw new UsageError(`${param} given twice`, command);
    delete params[name];
    params[param] = value;
  }
  for (const [name, value] of Object.entries(params)) {
    if (!known.has(name)) throw new UsageError(unknownOption(name, known), command);
    if (args[name] !== undefined) throw new UsageError(`${name} given twice`, command);
    args[name] = value;
  }
  if (spec.oneOf && !spec.oneOf.options.some((name) => args[name] !== undefined)) {
    const options = spec.oneOf.options.map((o) => `${optionText(o)} ${spec.options?.[o] ?? 'value'}`);
    throw new UsageError(
      `missing ${spec.oneOf.missing}: give ${options.slice(0, -1).join(', ')} or ${options.at(-1)}`,
      command,
    );
  }
  // global-dns asks for A, rdap infers domain or ip from the target: as the MCP tools do.
  Object.assign(args, missingDefaults(tool, args));
  return { kind: 'tool', tool, args, flags };
}
