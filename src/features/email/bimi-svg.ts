/**
 * The BIMI logo: an SVG checked against the SVG Tiny Portable/Secure profile
 * (draft-svg-tiny-ps-abrotman) and the BIMI Group's 32 KB guidance, without
 * rendering it.
 */
import { BIMI_SPEC } from './bimi-record.js';
import { type Finding, finding } from './types.js';

const TINY_PS = 'draft-svg-tiny-ps-abrotman';

/** BIMI Group guidance: the SVG should be at most 32 KB. */
export const SVG_MAX_BYTES = 32 * 1024;

export interface SvgReport {
  url: string;
  http_status: number | null;
  bytes: number | null;
  sha256: string | null;
  title: string | null;
  valid: boolean;
}

/** Checks an SVG logo against SVG Tiny PS and BIMI guidance, without rendering it. */
export function checkSvg(
  body: Buffer,
  truncated: boolean,
): { valid: boolean; title: string | null; findings: Finding[] } {
  const findings: Finding[] = [];
  const fail = (message: string, rfc = TINY_PS) => findings.push(finding('error', message, rfc));
  if (truncated || body.length > SVG_MAX_BYTES) {
    fail(`The SVG is larger than ${SVG_MAX_BYTES / 1024} KB.`, 'BIMI Group Implementation Guide');
    return { valid: false, title: null, findings };
  }
  const text = body.toString('utf8').replace(/<!--[\s\S]*?-->/g, '');
  if (/<!DOCTYPE|<!ENTITY/i.test(text)) fail('DOCTYPE and ENTITY declarations are not allowed.');
  // Elements: name and attribute text. Linear-time patterns: no nested quantifiers.
  const elements = [...text.matchAll(/<([A-Za-z_][\w:.-]*)([^>]*)>/g)].map((m) => ({
    name: m[1]!,
    attrs: attributes(m[2]!),
  }));
  const root = elements[0];
  if (!root || localName(root.name) !== 'svg') {
    fail('The file is not an SVG document (its root element is not <svg>).');
    return { valid: false, title: null, findings };
  }
  if (root.attrs.version !== '1.2')
    fail(
      `The root <svg> must have version="1.2"${root.attrs.version ? `, not "${root.attrs.version}"` : ''}.`,
    );
  if (root.attrs.baseProfile !== 'tiny-ps')
    fail(
      `The root <svg> must have baseProfile="tiny-ps"${root.attrs.baseProfile ? `, not "${root.attrs.baseProfile}"` : ''}.`,
    );
  for (const attr of ['x', 'y'])
    if (attr in root.attrs)
      fail(`The root <svg> must not have ${attr === 'x' ? 'an' : 'a'} ${attr}= attribute.`);
  const title = /<title(?:\s[^>]*)?>([\s\S]*?)<\/title>/.exec(text)?.[1]?.trim() ?? null;
  if (!title) fail('The SVG must have a non-empty <title>.');
  const forbidden = new Set([
    'script',
    'foreignobject',
    'animate',
    'animatemotion',
    'animatecolor',
    'animatetransform',
    'set',
  ]);
  const seenForbidden = new Set<string>();
  for (const el of elements) {
    const name = localName(el.name).toLowerCase();
    if (forbidden.has(name) && !seenForbidden.has(name)) {
      seenForbidden.add(name);
      fail(`<${localName(el.name)}> is not allowed.`);
    }
    for (const [attr, value] of Object.entries(el.attrs)) {
      if (/^on/i.test(attr)) fail(`Event handler attribute ${attr}= on <${el.name}> is not allowed.`);
      if ((attr === 'href' || attr.endsWith(':href')) && !value.trim().startsWith('#')) {
        fail(`<${el.name} ${attr}="${value}"> refers to an external resource.`);
      }
    }
  }
  if (/url\(\s*['"]?(?!#)/i.test(text) || /@import/i.test(text))
    fail('The SVG refers to an external resource (url() or @import).');
  const viewBox = root.attrs.viewBox
    ?.trim()
    .split(/[\s,]+/)
    .map(Number);
  if (viewBox?.length !== 4 || viewBox.some((n) => !Number.isFinite(n))) {
    findings.push(finding('warning', 'The root <svg> has no valid viewBox.', TINY_PS));
  } else if (viewBox[2] !== viewBox[3]) {
    findings.push(
      finding('warning', `The logo is ${viewBox[2]}×${viewBox[3]}; BIMI logos should be square.`, BIMI_SPEC),
    );
  }
  return { valid: !findings.some((f) => f.severity === 'error'), title, findings };
}

function localName(name: string): string {
  const colon = name.indexOf(':');
  return colon < 0 ? name : name.slice(colon + 1);
}

function attributes(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of text.matchAll(/([A-Za-z_:][\w:.-]*)\s*=\s*(?:"([^"]*)"|'([^']*)')/g)) {
    out[m[1]!] = m[2] ?? m[3] ?? '';
  }
  return out;
}
