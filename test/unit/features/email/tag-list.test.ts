/** The tag=value list syntax shared by DKIM, DMARC and BIMI records (RFC 6376 §3.2). */
import { describe, expect, it } from 'vitest';
import { parseTagList, tagValue } from '../../../../src/features/email/tag-list.js';

describe('tag lists', () => {
  it('splits on ";", trims folding whitespace, lower-cases names and keeps values as written', () => {
    const list = parseTagList(' v = DKIM1 ;K=rsa;\tp=AB CD ; ');
    expect(list.tags).toEqual([
      { name: 'v', value: 'DKIM1' },
      { name: 'k', value: 'rsa' },
      { name: 'p', value: 'AB CD' },
    ]);
    expect(tagValue(list, 'k')).toBe('rsa');
    expect(list.duplicates).toEqual([]);
  });

  it('reports duplicate names and pieces that are not name=value', () => {
    const list = parseTagList('v=1; p=a; P=b; p=c; junk; 1x=2; =3');
    expect(list.duplicates).toEqual(['p']);
    expect(list.malformed).toEqual(['junk', '1x=2', '=3']);
  });
});
