/**
 * What a tool adds to its route's input: the defaults it fills in (the CLI and MCP alike) and
 * the input schema that shows them, and enumerations offered in the cases the route accepts.
 */
import { describe, expect, it } from 'vitest';
import { GlobalDnsBodySchema } from '../../../../src/features/global-dns/global-dns.schema.js';
import { RdapQuerySchema, RdapResponseSchema } from '../../../../src/features/rdap/rdap.schema.js';
import { missingDefaults, rdapType } from '../../../../src/features/tools/defaults.js';
import { toolInputSchema, toolOutputSchema } from '../../../../src/features/tools/tool-schemas.js';

describe('tool defaults', () => {
  it('asks global DNS for A and infers the RDAP type from the target, when no type is given', () => {
    expect(missingDefaults({ name: 'global_dns' }, { target: 'example.com' })).toEqual({ type: 'A' });
    expect(missingDefaults({ name: 'global_dns' }, { target: 'example.com', type: null })).toEqual({
      type: 'A',
    });
    expect(missingDefaults({ name: 'rdap_lookup' }, { target: 'example.com' })).toEqual({ type: 'domain' });
    expect(missingDefaults({ name: 'rdap_lookup' }, { target: '192.0.2.1' })).toEqual({ type: 'ip' });
    expect(missingDefaults({ name: 'rdap_lookup' }, { target: '[2001:db8::1]' })).toEqual({ type: 'ip' });
    expect(missingDefaults({ name: 'rdap_lookup' }, { target: '192.0.2.0/24' })).toEqual({ type: 'ip' });
    expect(rdapType('192.0.2.0/24/1')).toBe('domain');
  });

  it('never changes a type the caller gave, and fills nothing for other tools', () => {
    expect(missingDefaults({ name: 'rdap_lookup' }, { target: '192.0.2.1', type: 'domain' })).toEqual({});
    expect(missingDefaults({ name: 'global_dns' }, { target: 'example.com', type: 'mx' })).toEqual({});
    expect(missingDefaults({ name: 'dns_lookup' }, { target: 'example.com' })).toEqual({});
    // No target: the route's own 400 names it.
    expect(missingDefaults({ name: 'rdap_lookup' }, {})).toEqual({});
  });
});

describe('tool schemas', () => {
  it('shows a filled-in parameter as optional, with its default or its rule', () => {
    const global = toolInputSchema({ name: 'global_dns', caseInsensitive: ['type'] }, GlobalDnsBodySchema);
    expect(global.required).toEqual(['target']);
    expect(global.properties?.type).toMatchObject({
      default: 'A',
      description: expect.stringMatching(/Default A/),
    });
    const rdap = toolInputSchema({ name: 'rdap_lookup' }, RdapQuerySchema);
    expect(rdap.required).toEqual(['target']);
    expect(rdap.properties?.type).toMatchObject({ description: expect.stringMatching(/ip when `target`/) });
    // The route's own schema (the REST contract) is left as it was.
    expect(RdapQuerySchema.required).toEqual(['target', 'type']);
  });

  it('offers a case-insensitive enumeration in both cases, the route’s spelling first', () => {
    const global = toolInputSchema({ name: 'global_dns', caseInsensitive: ['type'] }, GlobalDnsBodySchema);
    const values = (global.properties?.type as { enum?: string[] } | undefined)?.enum ?? [];
    expect(values.slice(0, 2)).toEqual(['A', 'AAAA']);
    expect(values).toEqual(expect.arrayContaining(['mx', 'MX', 'aaaa']));
    expect(() => toolInputSchema({ name: 'x', caseInsensitive: ['target'] }, RdapQuerySchema)).toThrow(
      /no enumeration/,
    );
  });

  it('takes the 200 response schema as the output schema, without OpenAPI’s discriminator', () => {
    const out = toolOutputSchema({ 200: RdapResponseSchema, 404: {} });
    expect(out?.type).toBe('object');
    expect(JSON.stringify(RdapResponseSchema)).toMatch(/"discriminator"/);
    expect(JSON.stringify(out)).not.toMatch(/"discriminator"/);
    expect(JSON.stringify(out)).toMatch(/"anyOf"/);
    expect(toolOutputSchema({ 400: {} })).toBeUndefined();
  });
});
