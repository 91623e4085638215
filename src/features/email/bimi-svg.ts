/**
 * The BIMI logo: an SVG checked against the SVG Tiny Portable/Secure profile
 * (draft-svg-tiny-ps-abrotman) and the BIMI Group's 32 KB guidance, without
 * rendering it. The file is read with an XML parser (saxes), so markup inside
 * CDATA sections, comments or attribute values is never taken for an element,
 * and a file that is not well-formed XML, which receivers cannot display,
 * says so.
 */
import { SaxesParser, type SaxesTagNS } from 'saxes';
import { BIMI_SPEC } from './bimi-record.js';
import { type Finding, finding } from './types.js';

const TINY_PS = 'draft-svg-tiny-ps-abrotman';

/** BIMI Group guidance: the SVG should be at most 32 KB. */
export const SVG_MAX_BYTES = 32 * 1024;

/** SVG Tiny PS: no scripting, no foreign content, no animation. Compared lower-cased. */
const FORBIDDEN_ELEMENTS: ReadonlySet<string> = new Set([
  'script',
  'foreignobject',
  'animate',
  'animatemotion',
  'animatecolor',
  'animatetransform',
  'set',
]);

export interface SvgReport {
  url: string;
  http_status: number | null;
  bytes: number | null;
  sha256: string | null;
  title: string | null;
  valid: boolean;
}

export interface SvgCheck {
  valid: boolean;
  title: string | null;
  findings: Finding[];
}

/** Checks an SVG logo against SVG Tiny PS and BIMI guidance, without rendering it. */
export function checkSvg(body: Buffer, truncated: boolean): SvgCheck {
  const findings: Finding[] = [];
  const fail = (message: string, rfc = TINY_PS) => findings.push(finding('error', message, rfc));
  if (truncated || body.length > SVG_MAX_BYTES) {
    fail(`The SVG is larger than ${SVG_MAX_BYTES / 1024} KB.`, 'BIMI Group Implementation Guide');
    return { valid: false, title: null, findings };
  }
  const doc = readXml(body.toString('utf8'));
  if (doc.doctype) fail('DOCTYPE and ENTITY declarations are not allowed.');
  const root = doc.elements[0];
  if (root?.local !== 'svg') {
    fail('The file is not an SVG document (its root element is not <svg>).');
    return { valid: false, title: null, findings };
  }
  if (doc.error) {
    fail(`The SVG is not well-formed XML (${doc.error}).`);
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
  const title = doc.title?.trim() ?? null;
  if (!title) fail('The SVG must have a non-empty <title>.');
  const seenForbidden = new Set<string>();
  for (const el of doc.elements) {
    const name = el.local.toLowerCase();
    if (FORBIDDEN_ELEMENTS.has(name) && !seenForbidden.has(name)) {
      seenForbidden.add(name);
      fail(`<${el.local}> is not allowed.`);
    }
    for (const [attr, value] of Object.entries(el.attrs)) {
      if (/^on/i.test(attr)) fail(`Event handler attribute ${attr}= on <${el.name}> is not allowed.`);
      if ((attr === 'href' || attr.endsWith(':href')) && !value.trim().startsWith('#')) {
        fail(`<${el.name} ${attr}="${value}"> refers to an external resource.`);
      }
    }
  }
  // CSS reaches outside the file through url() and @import, in attributes (style=, fill=, ...) and <style>.
  const css = [...doc.elements.flatMap((el) => Object.values(el.attrs)), doc.styleText];
  if (css.some((text) => /url\(\s*['"]?(?!#)/i.test(text) || /@import/i.test(text)))
    fail('The SVG refers to an external resource (url() or @import).');
  if (doc.stylesheet) fail('An <?xml-stylesheet?> instruction refers to an external resource.');
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

interface XmlElement {
  /** As written, with its prefix. */
  name: string;
  local: string;
  /** Values with entity references resolved, keyed by the name as written. */
  attrs: Record<string, string>;
}

/** What the checks need from the document, gathered in one pass. */
interface XmlSummary {
  /** In document order, the root first. */
  elements: XmlElement[];
  doctype: boolean;
  /** An `<?xml-stylesheet?>` processing instruction. */
  stylesheet: boolean;
  /** The text of the first <title>, or null when there is none. */
  title: string | null;
  /** The text of every <style> element, CDATA included. */
  styleText: string;
  /** The first well-formedness or namespace error, with its line and column; null when there is none. */
  error: string | null;
}

function readXml(text: string): XmlSummary {
  const out: XmlSummary = {
    elements: [],
    doctype: false,
    stylesheet: false,
    title: null,
    styleText: '',
    error: null,
  };
  // Open <title> (the first one only) and <style> elements around the current text.
  let titleDepth = 0;
  let styleDepth = 0;
  const addText = (data: string) => {
    if (titleDepth > 0) out.title += data;
    if (styleDepth > 0) out.styleText += data;
  };
  const parser = new SaxesParser({ xmlns: true });
  // saxes goes on after an error; the first is the one worth reporting, the rest often follow from it.
  parser.on('error', (err) => {
    out.error ??= err.message.replace(/^(\d+):(\d+): /, 'line $1, column $2: ').replace(/\.$/, '');
  });
  parser.on('doctype', () => {
    out.doctype = true;
  });
  parser.on('processinginstruction', ({ target }) => {
    if (target.toLowerCase() === 'xml-stylesheet') out.stylesheet = true;
  });
  parser.on('opentag', (tag: SaxesTagNS) => {
    const attrs: Record<string, string> = {};
    for (const attr of Object.values(tag.attributes)) attrs[attr.name] = attr.value;
    out.elements.push({ name: tag.name, local: tag.local, attrs });
    if (titleDepth > 0) titleDepth += 1;
    else if (tag.local === 'title' && out.title === null) {
      titleDepth = 1;
      out.title = '';
    }
    if (styleDepth > 0 || tag.local === 'style') styleDepth += 1;
  });
  parser.on('closetag', () => {
    if (titleDepth > 0) titleDepth -= 1;
    if (styleDepth > 0) styleDepth -= 1;
  });
  parser.on('text', addText);
  parser.on('cdata', addText);
  parser.write(text).close();
  return out;
}
