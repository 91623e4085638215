/** RFC 8941 parsing as used for Permissions-Policy (Dictionary) and COOP/COEP (Item). */
import { describe, expect, it } from 'vitest';
import {
  isInnerList,
  parseDictionary,
  parseItem,
  serializeBareItem,
} from '../../../../src/features/inspect/structured-fields.js';

describe('parseItem', () => {
  it.each([
    ['same-origin', { type: 'token', value: 'same-origin' }],
    ['  require-corp  ', { type: 'token', value: 'require-corp' }],
    ['"text"', { type: 'string', value: 'text' }],
    ['"a\\"b"', { type: 'string', value: 'a"b' }],
    ['42', { type: 'integer', value: 42 }],
    ['-1.5', { type: 'decimal', value: -1.5 }],
    ['?1', { type: 'boolean', value: true }],
    [':aGVsbG8=:', { type: 'bytes', value: 'aGVsbG8=' }],
  ])('%s', (input, value) => {
    expect(parseItem(input)?.value).toEqual(value);
  });

  it('keeps parameters', () => {
    const item = parseItem('same-origin; report-to="coop"');
    expect(item?.params.get('report-to')).toEqual({ type: 'string', value: 'coop' });
  });

  it.each([
    'same-origin, unsafe-none',
    '"unterminated',
    '1234567890123456',
    '1.2345',
    '?2',
    '"\\x"',
    'a b',
    '',
  ])('rejects %j', (input) => {
    expect(parseItem(input)).toBeUndefined();
  });
});

describe('parseDictionary', () => {
  it('parses inner lists, single items and bare keys', () => {
    const dict = parseDictionary('geolocation=(), camera=(self "https://a.example"), fullscreen=*, usb');
    expect(dict && [...dict.keys()]).toEqual(['geolocation', 'camera', 'fullscreen', 'usb']);
    const camera = dict?.get('camera');
    expect(camera && isInnerList(camera) && camera.items.map((i) => serializeBareItem(i.value))).toEqual([
      'self',
      '"https://a.example"',
    ]);
    const usb = dict?.get('usb');
    expect(usb && !isInnerList(usb) && usb.value).toEqual({ type: 'boolean', value: true });
  });

  it('lets a later duplicate key win (RFC 8941 §4.2.2)', () => {
    const dict = parseDictionary('camera=(), camera=*');
    const camera = dict?.get('camera');
    expect(camera && !isInnerList(camera) && camera.value).toEqual({ type: 'token', value: '*' });
  });

  it.each([
    'Camera=()',
    'camera=(self',
    'camera=(), ',
    'camera=() x',
    'camera=(self,"a")',
    'camera=(self)junk',
  ])('rejects %j', (input) => {
    expect(parseDictionary(input)).toBeUndefined();
  });
});
