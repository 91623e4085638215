/**
 * BIMI: the assertion record, the SVG Tiny PS checks and the evaluation with
 * its DMARC-enforcement prerequisite. The VMC checks: bimi-vmc.test.ts.
 */
import { describe, expect, it } from 'vitest';
import {
  type BimiInput,
  checkSvg,
  evaluateBimi,
  parseBimiRecord,
} from '../../../../src/features/email/bimi.js';
import type { FetchOutcome } from '../../../../src/features/email/types.js';
import { issueVmc, testMarkAuthority } from '../../../fakes/test-vmc.js';
import { fixtureText } from '../../../fixtures/email/zones.js';

const svg = (text: string) => checkSvg(Buffer.from(text), false);
const GOOD = fixtureText('logo.svg');

describe('BIMI record', () => {
  it('parses l= and a= HTTPS URLs; empty both is a declination', () => {
    expect(parseBimiRecord('v=BIMI1; l=https://x.test/l.svg; a=https://x.test/a.pem')).toMatchObject({
      valid: true,
      declined: false,
      location: 'https://x.test/l.svg',
      authority: 'https://x.test/a.pem',
    });
    expect(parseBimiRecord('v=BIMI1; l=; a=;')).toMatchObject({ valid: true, declined: true });
  });

  it.each([
    ['v=BIMI1; l=http://x.test/l.svg', 'l=http://x.test/l.svg must use https.'],
    ['v=BIMI1; l=https://x.test/a.svg,https://x.test/b.svg', 'l= must be a single URI.'],
    ['v=BIMI1; l=not a url', 'l=not a url is not a URL.'],
    ['v=BIMI1; l=https://x.test/l.svg; l=https://x.test/m.svg', 'Tag l appears more than once.'],
  ])('%s is invalid', (record, message) => {
    const parsed = parseBimiRecord(record);
    expect(parsed.valid).toBe(false);
    expect(parsed.findings.map((f) => f.message)).toContain(message);
  });
});

describe('BIMI SVG (SVG Tiny PS)', () => {
  it('accepts a conforming logo and reads its title', () => {
    expect(svg(GOOD)).toEqual({ valid: true, title: 'Strong Example', findings: [] });
  });

  it('finds every problem in a non-conforming logo', () => {
    const result = svg(fixtureText('logo-bad.svg'));
    expect(result.valid).toBe(false);
    expect(result.findings.map((f) => `${f.severity}: ${f.message}`)).toEqual([
      'error: The root <svg> must have version="1.2", not "1.1".',
      'error: The root <svg> must have baseProfile="tiny-ps".',
      'error: The root <svg> must not have an x= attribute.',
      'error: The root <svg> must not have a y= attribute.',
      'error: The SVG must have a non-empty <title>.',
      'error: <script> is not allowed.',
      'error: <image xlink:href="https://tracker.example/pixel.png"> refers to an external resource.',
      'error: Event handler attribute onclick= on <rect> is not allowed.',
      'warning: The logo is 64×32; BIMI logos should be square.',
    ]);
  });

  it('refuses DOCTYPE/ENTITY declarations, url() references and oversized files', () => {
    expect(
      svg(`<!DOCTYPE svg [<!ENTITY x "y">]>${GOOD.replace(/^<\?xml[^>]*>\n/, '')}`).findings[0]!.message,
    ).toBe('DOCTYPE and ENTITY declarations are not allowed.');
    expect(
      svg(GOOD.replace('fill="#1a4d8f"', 'fill="url(https://x.test/p.svg#g)"')).findings.map(
        (f) => f.message,
      ),
    ).toEqual(['The SVG refers to an external resource (url() or @import).']);
    expect(svg(GOOD.replace('fill="#1a4d8f"', 'fill="url(#g)"')).valid).toBe(true);
    expect(checkSvg(Buffer.alloc(33 * 1024, 0x20), false).findings.map((f) => f.message)).toEqual([
      'The SVG is larger than 32 KB.',
    ]);
    expect(checkSvg(Buffer.from(GOOD), true).valid).toBe(false);
    expect(svg('<html><body>hi</body></html>').findings.map((f) => f.message)).toEqual([
      'The file is not an SVG document (its root element is not <svg>).',
    ]);
  });
});

// The SVG check used to find elements with regular expressions; each case below fooled it.
describe('BIMI SVG is read as XML, not matched with patterns', () => {
  const HEAD =
    '<svg xmlns="http://www.w3.org/2000/svg" version="1.2" baseProfile="tiny-ps" viewBox="0 0 64 64">';
  const messages = (text: string) => svg(text).findings.map((f) => f.message);

  it('markup inside a CDATA section is text: it neither supplies a <title> nor counts as <script>', () => {
    expect(messages(`${HEAD}<desc><![CDATA[<title>Brand</title>]]></desc></svg>`)).toEqual([
      'The SVG must have a non-empty <title>.',
    ]);
    expect(
      svg(`${HEAD}<title>T</title><style><![CDATA[/* <script> */ rect { fill: red }]]></style></svg>`),
    ).toEqual({ valid: true, title: 'T', findings: [] });
  });

  it('a comment opener inside CDATA does not hide the real <script> after it', () => {
    expect(
      messages(
        `${HEAD}<title>T</title><desc><![CDATA[<!--]]></desc><script>alert(1)</script><desc><![CDATA[-->]]></desc></svg>`,
      ),
    ).toEqual(['<script> is not allowed.']);
  });

  it('a ">" inside an attribute value does not end the tag', () => {
    expect(
      messages(
        '<svg xmlns="http://www.w3.org/2000/svg" version="1.2" baseProfile="tiny-ps" x="a>b" viewBox="0 0 64 64"><title>T</title></svg>',
      ),
    ).toEqual(['The root <svg> must not have an x= attribute.']);
  });

  it('malformed XML is a finding (receivers cannot display it), with where the parser stopped', () => {
    const result = svg(`${HEAD}<title>T</title><rect></svg>`);
    expect(result.valid).toBe(false);
    expect(result.findings.map((f) => `${f.severity}: ${f.message}`)).toEqual([
      'error: The SVG is not well-formed XML (line 1, column 124: unexpected close tag).',
    ]);
    expect(messages(`${HEAD}<title>T</title></svg><svg/>`)).toEqual([
      'The SVG is not well-formed XML (line 1, column 123: documents may contain only one root).',
    ]);
    expect(messages(`${HEAD}<title>T</title><image xlink:href="#a"/></svg>`)).toEqual([
      'The SVG is not well-formed XML (line 1, column 136: unbound namespace prefix: "xlink").',
    ]);
  });

  it('reads the title with its entity references resolved', () => {
    expect(svg(`${HEAD}<title>AT&amp;T</title></svg>`).title).toBe('AT&T');
  });

  it('url() and @import count in CSS (attributes and <style>), not in prose', () => {
    expect(
      svg(`${HEAD}<title>T</title><desc>Drawn after url(https://x.test/a), not @imported.</desc></svg>`),
    ).toEqual({ valid: true, title: 'T', findings: [] });
    expect(
      messages(
        `${HEAD}<title>T</title><style><![CDATA[rect { fill: url(https://x.test/a) }]]></style></svg>`,
      ),
    ).toEqual(['The SVG refers to an external resource (url() or @import).']);
  });

  it('an <?xml-stylesheet?> instruction is an external resource', () => {
    expect(messages(`<?xml-stylesheet href="https://x.test/a.css"?>${HEAD}<title>T</title></svg>`)).toEqual([
      'An <?xml-stylesheet?> instruction refers to an external resource.',
    ]);
  });
});

describe('BIMI evaluation', () => {
  const record = (text: string): BimiInput['lookups'] => [
    {
      selector: 'default',
      domain: 'brand.test',
      name: 'default._bimi.brand.test',
      outcome: { kind: 'answer', rcode: 'NOERROR', records: [text], aliases: [] },
    },
  ];
  const ok = (body: string): FetchOutcome => ({
    ok: true,
    response: { status: 200, headers: {}, body: Buffer.from(body), truncated: false },
  });

  it('DMARC at enforcement is a prerequisite: without it the check fails', () => {
    const result = evaluateBimi({
      domain: 'brand.test',
      lookups: record('v=BIMI1; l=https://brand.test/l.svg'),
      svg: ok(GOOD),
      dmarcEnforced: false,
      now: Date.now(),
    });
    expect(result).toMatchObject({ state: 'record', status: 'fail', svgValid: true, vmcValid: false });
    expect(result.findings.map((f) => f.message)).toContain(
      'BIMI requires DMARC at quarantine or reject (without t=y); receivers will not show the logo.',
    );
  });

  it('a record with a good logo but no VMC is a warning', () => {
    const result = evaluateBimi({
      domain: 'brand.test',
      lookups: record('v=BIMI1; l=https://brand.test/l.svg; a='),
      svg: ok(GOOD),
      dmarcEnforced: true,
      now: Date.now(),
    });
    expect(result).toMatchObject({ status: 'warn', recordValid: true, svgValid: true, vmcValid: false });
    expect(result.svg).toMatchObject({
      url: 'https://brand.test/l.svg',
      http_status: 200,
      title: 'Strong Example',
      valid: true,
    });
  });

  it('uses the first candidate selector that has a record', () => {
    const result = evaluateBimi({
      domain: 'brand.test',
      lookups: [
        {
          selector: 'mine',
          domain: 'brand.test',
          name: 'mine._bimi.brand.test',
          outcome: { kind: 'answer', rcode: 'NXDOMAIN', records: [], aliases: [] },
        },
        ...record('v=BIMI1; l=; a='),
      ],
      dmarcEnforced: true,
      now: Date.now(),
    });
    expect(result).toMatchObject({ selector: 'default', state: 'declined', status: 'info' });
  });

  it('a logo host that cannot be resolved (DNS failure) leaves the SVG points unknown, not failed', () => {
    const result = evaluateBimi({
      domain: 'brand.test',
      lookups: record('v=BIMI1; l=https://brand.test/l.svg'),
      svg: { ok: false, reason: 'DNS lookup failed', temporary: true },
      dmarcEnforced: true,
      now: Date.now(),
    });
    expect(result.svgValid).toBeUndefined();
  });
  it('a record found at the organizational domain says so, and its VMC may name that domain', async () => {
    const { roots } = await testMarkAuthority();
    const result = evaluateBimi({
      domain: 'news.brand.test',
      lookups: [
        {
          selector: 'default',
          domain: 'news.brand.test',
          name: 'default._bimi.news.brand.test',
          outcome: { kind: 'answer', rcode: 'NXDOMAIN', records: [], aliases: [] },
        },
        {
          selector: 'default',
          domain: 'brand.test',
          name: 'default._bimi.brand.test',
          outcome: {
            kind: 'answer',
            rcode: 'NOERROR',
            records: ['v=BIMI1; l=https://brand.test/l.svg; a=https://brand.test/a.pem'],
            aliases: [],
          },
        },
      ],
      svg: ok(GOOD),
      vmc: ok(await issueVmc({ domains: ['brand.test'] })),
      dmarcEnforced: true,
      now: Date.now(),
      markRoots: roots,
    });
    expect(result).toMatchObject({
      recordDomain: 'brand.test',
      svgValid: true,
      vmcValid: true,
      status: 'pass',
    });
    expect(result.summary).toBe(
      'BIMI record at default._bimi.brand.test (the organizational domain’s) with a valid SVG logo and a valid VMC.',
    );
  });

  it('the VMC is judged against the logo fetched from l=, and against the bundled roots by default', async () => {
    const { roots } = await testMarkAuthority();
    const input = {
      domain: 'brand.test',
      lookups: record('v=BIMI1; l=https://brand.test/l.svg; a=https://brand.test/a.pem'),
      vmc: ok(await issueVmc({ domains: ['brand.test'] })),
      dmarcEnforced: true,
      now: Date.now(),
    };
    expect(evaluateBimi({ ...input, svg: ok(GOOD), markRoots: roots }).vmcValid).toBe(true);
    const other = evaluateBimi({
      ...input,
      svg: ok(GOOD.replace('Strong Example', 'Other')),
      markRoots: roots,
    });
    expect(other).toMatchObject({ vmcValid: false, vmc: { logo: { matches_location: false } } });
    // The test MVA is no Mark Verifying Authority anyone trusts.
    expect(evaluateBimi({ ...input, svg: ok(GOOD) })).toMatchObject({
      vmcValid: false,
      vmc: { mva_root: null },
    });
  });
});
