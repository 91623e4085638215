import { describe, expect, it } from 'vitest';
import { EMPTY_STATE, type PageState } from '../../../src/web/state';
import { parseTarget } from '../../../src/web/target';
import { toolById, toolFor } from '../../../src/web/tools';

const spf = toolById('spf');
const ip = parseTarget('198.51.100.7')!;
const state = (fields: Partial<PageState>): PageState => ({ ...EMPTY_STATE, tool: 'spf', ...fields });

describe('the SPF check tool', () => {
  it('takes the client address from the box and asks /api/spf about the sender, without empty fields', () => {
    const [part] = spf.parts(ip, state({ q: ip.host, sender: ' alice@sender.test ', helo: '' }));
    expect(part?.call).toEqual({
      method: 'GET',
      path: '/api/spf',
      query: { ip: '198.51.100.7', sender: 'alice@sender.test' },
    });
    expect(part?.title).toBe('SPF check · 198.51.100.7 as alice@sender.test');
  });

  it('names the identity checked in its title: the HELO name for a bounce, the policy domain when given', () => {
    const title = (fields: Partial<PageState>) => spf.parts(ip, state(fields))[0]?.title;
    expect(title({ helo: 'mx.sender.test' })).toBe('SPF check · 198.51.100.7 as HELO mx.sender.test');
    expect(title({ sender: 'alice@sender.test', domain: 'other.test' })).toBe(
      'SPF check · 198.51.100.7 as alice@sender.test (policy of other.test)',
    );
    expect(spf.parts(ip, state({ domain: 'other.test' }))[0]?.call.query).toEqual({
      ip: '198.51.100.7',
      domain: 'other.test',
    });
  });

  it('is ready only with a sender, HELO name or domain (else the API could only answer 400)', () => {
    expect(spf.ready?.(state({}))).toBe(false);
    expect(spf.ready?.(state({ sender: '   ' }))).toBe(false);
    expect(spf.ready?.(state({ sender: 'alice@sender.test' }))).toBe(true);
    expect(spf.ready?.(state({ helo: 'mx.sender.test' }))).toBe(true);
    expect(spf.ready?.(state({ domain: 'sender.test' }))).toBe(true);
  });

  it('is for IP addresses only: a domain in the box gets the domain default', () => {
    expect(toolFor('ip', 'spf').id).toBe('spf');
    expect(toolFor('domain', 'spf').id).toBe('dns');
  });
});

describe('the mail servers tool', () => {
  const mailTls = toolById('mail-tls');

  it('asks /api/mail-tls about the domain in the box, the host of a URL or address', () => {
    const [part] = mailTls.parts(parseTarget('alice@mail.example.test')!, {
      ...EMPTY_STATE,
      tool: 'mail-tls',
    });
    expect(part?.call).toEqual({
      method: 'GET',
      path: '/api/mail-tls',
      query: { domain: 'mail.example.test' },
    });
    expect(part?.title).toBe('Mail servers · mail.example.test');
    expect(mailTls.label).toBe('Mail servers');
  });

  it('is for domains only: an address in the box gets the address default', () => {
    expect(toolFor('domain', 'mail-tls').id).toBe('mail-tls');
    expect(toolFor('ip', 'mail-tls').id).toBe('ip');
  });
});
