import { describe, expect, it } from 'vitest';
import { organizationalDomain, sameOrganization } from '../../../src/net/organizational-domain.js';

describe('organizationalDomain (Public Suffix List)', () => {
  it.each([
    ['mail.example.com', 'example.com'],
    ['Example.COM.', 'example.com'],
    ['a.b.example.co.uk', 'example.co.uk'],
    // The private section counts: each github.io site is its own organization.
    ['foo.github.io', 'foo.github.io'],
    ['www.foo.github.io', 'foo.github.io'],
  ])('%s → %s', (name, org) => {
    expect(organizationalDomain(name)).toBe(org);
  });

  it.each(['com', 'co.uk', 'github.io', '192.0.2.1'])('%s has none', (name) => {
    expect(organizationalDomain(name)).toBeNull();
  });

  it('siblings under one registrable domain are one organization; neighbours on a shared suffix are not', () => {
    expect(sameOrganization('reports.example.com', 'mail.example.com')).toBe(true);
    expect(sameOrganization('example.com', 'dmarc.example.com')).toBe(true);
    expect(sameOrganization('example.com', 'example.net')).toBe(false);
    expect(sameOrganization('a.github.io', 'b.github.io')).toBe(false);
    expect(sameOrganization('example.co.uk', 'other.co.uk')).toBe(false);
  });
});
