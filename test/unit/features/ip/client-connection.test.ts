import { describe, expect, it } from 'vitest';
import {
  clientFromForwarded,
  edgeHeaders,
  forwardedFor,
} from '../../../../src/features/ip/client-connection.js';
import { trustRule } from '../../../../src/plugins/client-address.js';

describe('trustRule (TRUST_PROXY semantics, as proxy-addr applies them)', () => {
  it('false trusts nobody, true everybody, a hop count that many hops', () => {
    expect(trustRule(false)('127.0.0.1', 0)).toBe(false);
    expect(trustRule(true)('203.0.113.9', 5)).toBe(true);
    const two = trustRule(2);
    expect([two('x', 0), two('x', 1), two('x', 2)]).toEqual([true, true, false]);
  });

  it('a CIDR list trusts addresses inside it, IPv4-mapped included', () => {
    const rule = trustRule(['10.0.0.0/8', '2001:db8::/32']);
    expect(rule('10.1.2.3', 0)).toBe(true);
    expect(rule('::ffff:10.1.2.3', 0)).toBe(true);
    expect(rule('2001:db8::1', 3)).toBe(true);
    expect(rule('11.0.0.1', 0)).toBe(false);
  });
});

describe('Forwarded (RFC 7239)', () => {
  it('reads for= nodes: IPv4, quoted IPv6 with port, IPv4 with port, unknown and obfuscated', () => {
    expect(
      forwardedFor(
        'for=192.0.2.43, for="[2001:db8:cafe::17]:4711";proto=https, For="192.0.2.60:47011";by=203.0.113.43, for=unknown, for=_hidden, proto=http',
      ),
    ).toEqual(['192.0.2.43', '2001:db8:cafe::17', '192.0.2.60', undefined, undefined, undefined]);
  });

  it('walks from the peer outwards, believing a hop only while the one before is trusted', () => {
    const trusted = trustRule(['10.0.0.0/8']);
    const header = 'for=198.51.100.7, for=10.0.0.2';
    // Peer 10.0.0.1 (trusted) says 10.0.0.2 sent it; 10.0.0.2 (trusted) says the client is 198.51.100.7.
    expect(clientFromForwarded('10.0.0.1', header, trusted)).toBe('198.51.100.7');
    // An untrusted peer is the client, whatever it claims.
    expect(clientFromForwarded('203.0.113.5', header, trusted)).toBe('203.0.113.5');
    // A spoofed entry to the left of an untrusted hop is never reached.
    expect(clientFromForwarded('10.0.0.1', 'for=192.0.2.1, for=203.0.113.5', trusted)).toBe('203.0.113.5');
    // An unknown node stops the walk at the last address vouched for.
    expect(clientFromForwarded('10.0.0.1', 'for=192.0.2.1, for=unknown', trusted)).toBe('10.0.0.1');
    // A hop count: one proxy trusted.
    expect(clientFromForwarded('10.0.0.1', 'for=192.0.2.1, for=198.51.100.7', trustRule(1))).toBe(
      '198.51.100.7',
    );
  });
});

describe('edgeHeaders', () => {
  it('passes the allow-listed CDN headers only, and only clean values', () => {
    expect(
      edgeHeaders({
        'cf-ipcountry': 'NL',
        'cf-ray': '8f1c2b3a4d5e6f70-AMS',
        'cf-visitor': '{"scheme":"https"}',
        'cf-connecting-ip': '198.51.100.7',
        'cloudfront-viewer-asn': '1136',
        'x-secret-internal': 'token',
        cookie: 'session=abc',
        'cf-ipcity': 'Amsterdam\u0000<script>',
        'cf-region': 'x'.repeat(300),
      }),
    ).toEqual({
      'cf-ipcountry': 'NL',
      'cf-ray': '8f1c2b3a4d5e6f70-AMS',
      'cf-visitor': '{"scheme":"https"}',
      'cf-connecting-ip': '198.51.100.7',
      'cloudfront-viewer-asn': '1136',
    });
  });
});
