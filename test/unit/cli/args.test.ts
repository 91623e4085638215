/** The command line → a route call: positionals, passed-through options, inferred and default types, usage errors. */
import { describe, expect, it } from 'vitest';
import { parseCommandLine, rdapType, UsageError } from '../../../src/cli/args.js';
import { main } from '../../../src/cli/cli.js';
import { COMMANDS } from '../../../src/cli/commands.js';
import { RENDERERS } from '../../../src/cli/render/index.js';
import { TOOLS } from '../../../src/features/tools/catalog.js';
import { thrownBy } from '../../expect-error.js';

function tool(argv: string[], env: Record<string, string> = {}) {
  const invocation = parseCommandLine(argv, env);
  if (invocation.kind !== 'tool') throw new Error(`not a tool call: ${invocation.kind}`);
  return invocation;
}

describe('parseCommandLine', () => {
  it('maps positionals to the route parameters and passes other options through, - read as _', () => {
    expect(tool(['dns', 'example.com', 'MX']).args).toEqual({ target: 'example.com', type: 'MX' });
    expect(tool(['email', 'example.com', '--selector', 's1']).args).toEqual({
      domain: 'example.com',
      selector: 's1',
    });
    expect(tool(['spf', '192.0.2.1', '--sender=a@example.com', '--helo', 'h']).args).toEqual({
      ip: '192.0.2.1',
      sender: 'a@example.com',
      helo: 'h',
    });
    expect(tool(['inspect', 'example.com', '--include-tls', 'false']).args).toEqual({
      target: 'example.com',
      include_tls: 'false',
    });
    expect(tool(['inspect', 'example.com', '--include-tls']).args).toMatchObject({ include_tls: 'true' });
  });

  it('reads a bare switch as the value it stands for, before or after the target (tls-scan --smtp)', () => {
    expect(tool(['tls-scan', 'example.com', '--smtp']).args).toEqual({
      target: 'example.com',
      service: 'smtp',
    });
    expect(tool(['tls-scan', '--smtp', 'example.com']).args).toEqual({
      target: 'example.com',
      service: 'smtp',
    });
    expect(tool(['tls-scan', 'example.com', '--service', 'https']).args).toEqual({
      target: 'example.com',
      service: 'https',
    });
    expect(thrownBy(() => tool(['tls-scan', 'example.com', '--smtp=yes']), UsageError)).toMatchObject({
      message: '--smtp takes no value',
    });
    expect(
      thrownBy(() => tool(['tls-scan', 'example.com', '--smtp', '--service', 'https']), UsageError),
    ).toMatchObject({
      message: 'service given twice',
    });
  });

  it('message: the FILE is optional (standard input), who connected by --ip, --helo, --mail-from', () => {
    expect(tool(['message', 'mail.eml', '--ip', '192.0.2.1', '--mail-from', 'a@example.com']).args).toEqual({
      message: 'mail.eml',
      ip: '192.0.2.1',
      mail_from: 'a@example.com',
    });
    expect(tool(['message', '--helo', 'mx.example.com']).args).toEqual({ helo: 'mx.example.com' });
    expect(tool(['message', '-']).args).toEqual({ message: '-' });
    expect(thrownBy(() => tool(['message', 'a.eml', 'b.eml']), UsageError)).toMatchObject({
      message: 'too many arguments: b.eml',
    });
  });

  it('infers the RDAP type and asks global DNS for A by default', () => {
    expect(tool(['rdap', 'google.com']).args).toEqual({ target: 'google.com', type: 'domain' });
    expect(tool(['rdap', '192.0.2.0/24']).args.type).toBe('ip');
    expect(tool(['rdap', '2001:db8::1']).args.type).toBe('ip');
    expect(tool(['rdap', '8.8.8.8', '--type', 'domain']).args.type).toBe('domain');
    expect(tool(['global-dns', 'example.com']).args).toEqual({ target: 'example.com', type: 'A' });
    expect(rdapType('example.com/24')).toBe('domain');
  });

  it('reads the global flags anywhere, and NETDIAG_API when --api is not given', () => {
    const t = tool(['--json', 'dns', 'example.com', '--api', 'https://a.example']);
    expect(t.flags).toMatchObject({ json: true, api: 'https://a.example' });
    expect(tool(['dns', 'x'], { NETDIAG_API: 'https://b.example' }).flags.api).toBe('https://b.example');
    expect(parseCommandLine(['dns', '--help'], {})).toMatchObject({ kind: 'help', topic: 'dns' });
    expect(parseCommandLine([], {})).toMatchObject({ kind: 'help', topic: undefined });
    expect(parseCommandLine(['-V'], {})).toMatchObject({ kind: 'version' });
    expect(parseCommandLine(['mcp', '--stdio'], {})).toMatchObject({ kind: 'mcp' });
  });

  it('refuses what cannot be run, naming the command', () => {
    for (const argv of [
      ['nope'],
      ['spf'],
      ['dns', 'a', 'b', 'c'],
      ['mcp'],
      ['serve', 'x'],
      ['dns', 'x', '--api'],
    ]) {
      expect(thrownBy(() => parseCommandLine(argv, {}), UsageError).message, argv.join(' ')).not.toBe('');
    }
  });

  it('refuses an option the command does not take, suggesting a near miss (issue 31)', () => {
    const typo = thrownBy(
      () => parseCommandLine(['email', 'goldmail.net', '--selecter', 'acme2026'], {}),
      UsageError,
    );
    expect(typo.message).toBe('unknown option --selecter (did you mean --selector?)');
    expect(typo.command).toBe('email');
    for (const argv of [
      ['dns', 'example.com', '--frobnicate'],
      ['dns', 'example.com', '--selector=s1'],
      ['my-ip', '--ip', '192.0.2.1'],
      ['inspect', 'example.com', '-x'],
    ]) {
      expect(thrownBy(() => parseCommandLine(argv, {}), UsageError).message, argv.join(' ')).toMatch(
        /^unknown option --/,
      );
    }
  });

  it('spf without a sender, a HELO name or a domain says which is missing and how to give it', () => {
    const err = thrownBy(() => parseCommandLine(['spf', '192.0.2.1'], {}), UsageError);
    expect(err.message).toBe(
      'missing the domain whose SPF policy to check: give --sender address, --helo name or --domain domain',
    );
    expect(tool(['spf', '192.0.2.1', '--helo', 'mx.example.com']).args).toMatchObject({
      helo: 'mx.example.com',
    });
    expect(tool(['spf', '192.0.2.1', '--domain', 'example.com']).args).toMatchObject({
      domain: 'example.com',
    });
  });

  it('an unknown option: exit status 2, the command’s usage on stderr, nothing on stdout', async () => {
    const out: string[] = [];
    const err: string[] = [];
    const io = {
      stdout: { write: (s: string) => out.push(s) > 0, isTTY: false },
      stderr: { write: (s: string) => err.push(s) > 0, isTTY: false },
      env: {},
    };
    const outcome = await main(
      ['email', 'goldmail.net', '--selecter', 'acme2026'],
      io,
      AbortSignal.timeout(5_000),
    );
    expect(outcome).toEqual({ exit: 2 });
    expect(out.join('')).toBe('');
    expect(err.join('')).toBe(
      'netdiag email: unknown option --selecter (did you mean --selector?)\n' +
        'usage: netdiag email <domain> [--selector name] [--json] [--api URL]\n' +
        '       (netdiag help email)\n',
    );
  });

  it('has a spelling and a renderer for every tool', () => {
    for (const t of TOOLS) {
      expect(COMMANDS[t.command], t.command).toBeDefined();
      expect(RENDERERS[t.command], t.command).toBeDefined();
    }
  });
});
