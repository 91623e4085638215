/**
 * RelayLists' verdict when a list's index cannot be read (it is a file since
 * issue 16): that list cannot say, so the answer is "not determined" (503
 * naming it), never a crash of the request.
 */
import { describe, expect, it } from 'vitest';
import { parseIpNumber } from '../../../../src/providers/ip/ip-number.js';
import type { ListSource } from '../../../../src/providers/ip/list-source.js';
import type { RelayIndexFile } from '../../../../src/providers/ip/relay-index-file.js';
import { RelayLists } from '../../../../src/providers/ip/relay-lists.js';

function source(lookup: () => unknown): ListSource<RelayIndexFile> {
  const fake = {
    info: { id: 'tor-exit-list', name: 'Tor Project bulk exit list' },
    current: { data: { lookup }, entries: 1, updatedAt: 0, source: 'x' },
    lastError: undefined,
  };
  return fake as unknown as ListSource<RelayIndexFile>;
}

describe('RelayLists', () => {
  it('answers "not determined" and names the list when its index cannot be read', () => {
    let failing = true;
    const lists = new RelayLists([
      {
        provider: 'Tor',
        source: source(() => {
          if (failing)
            throw Object.assign(new Error("EIO: i/o error, read '/var/cache/x.index'"), { code: 'EIO' });
          return undefined;
        }),
      },
    ]);
    const ip = parseIpNumber('198.51.100.1')!;
    expect(lists.classify(ip)).toBeUndefined();
    expect(lists.attempts()).toEqual([
      {
        id: 'tor-exit-list',
        name: 'Tor Project bulk exit list',
        status: 'failed',
        error: "upstream_error: the list's index could not be read: EIO",
      },
    ]);
    // Readable again: a definite answer, and the list is fine.
    failing = false;
    expect(lists.classify(ip)).toBeNull();
    expect(lists.attempts()).toEqual([
      { id: 'tor-exit-list', name: 'Tor Project bulk exit list', status: 'ok' },
    ]);
  });
});
