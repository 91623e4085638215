import { describe, expect, it } from 'vitest';
import { type HistoryHost, PageHistory } from '../../../src/web/page-history';
import { EMPTY_STATE, type PageState } from '../../../src/web/state';

/** A browser tab's history: entries of URLs, the one on show, and back/forward. */
function fakeTab(start: string) {
  const entries = [start];
  let index = 0;
  const listeners = new Set<() => void>();
  const current = () => new URL(entries[index] ?? '/', 'https://netdiag.test');
  const host: HistoryHost = {
    location: {
      get pathname() {
        return current().pathname;
      },
      get search() {
        return current().search;
      },
    },
    history: {
      pushState(_data, _unused, url) {
        entries.splice(index + 1, entries.length, url);
        index++;
      },
      replaceState(_data, _unused, url) {
        entries[index] = url;
      },
    },
    addEventListener: (_type, listener) => listeners.add(listener),
    removeEventListener: (_type, listener) => listeners.delete(listener),
  };
  const move = (by: number) => {
    index += by;
    for (const listener of listeners) listener();
  };
  return { host, entries, back: () => move(-1), forward: () => move(1), listeners };
}

const DNS: PageState = { ...EMPTY_STATE, q: 'example.test', tool: 'dns', type: 'MX' };
const EMAIL: PageState = { ...EMPTY_STATE, q: 'example.test', tool: 'email', selector: 's1' };
const SPF: PageState = {
  ...EMPTY_STATE,
  q: '192.0.2.25',
  tool: 'spf',
  sender: 'alice@example.test',
  helo: 'mx.example.test',
  domain: '',
};

describe('PageHistory', () => {
  it('reads the state the address bar holds', () => {
    const tab = fakeTab('/?q=example.test&tool=dns&type=mx');
    expect(new PageHistory(tab.host).read()).toEqual(DNS);
  });

  it('keeps the SPF check’s sender and HELO name in the URL, and only for that tool', () => {
    const tab = fakeTab('/');
    const history = new PageHistory(tab.host);
    history.record(SPF, 'push');
    // The fields stay in the state when another tool is picked, but are not that tool's URL.
    history.record({ ...SPF, tool: 'ip' }, 'push');
    expect(tab.entries).toEqual([
      '/',
      '/?q=192.0.2.25&tool=spf&sender=alice%40example.test&helo=mx.example.test',
      '/?q=192.0.2.25&tool=ip',
    ]);
    tab.back();
    expect(history.read()).toEqual(SPF);
    expect(new PageHistory(fakeTab('/?q=192.0.2.25&tool=spf&domain=example.test').host).read()).toEqual({
      ...EMPTY_STATE,
      q: '192.0.2.25',
      tool: 'spf',
      domain: 'example.test',
    });
  });

  it('push adds an entry, unless it is the one on show', () => {
    const tab = fakeTab('/');
    const history = new PageHistory(tab.host);
    history.record(DNS, 'push');
    history.record(DNS, 'push');
    history.record(EMAIL, 'push');
    expect(tab.entries).toEqual([
      '/',
      '/?q=example.test&tool=dns&type=MX',
      '/?q=example.test&tool=email&selector=s1',
    ]);
  });

  it('replace rewrites the entry on show (the page opened on a query, now normalized)', () => {
    const tab = fakeTab('/?q=example.test');
    new PageHistory(tab.host).record(DNS, 'replace');
    expect(tab.entries).toEqual(['/?q=example.test&tool=dns&type=MX']);
  });

  it('history and stay leave the address bar as it is', () => {
    const tab = fakeTab('/?q=other.test');
    const history = new PageHistory(tab.host);
    history.record(DNS, 'history');
    history.record(DNS, 'stay');
    expect(tab.entries).toEqual(['/?q=other.test']);
  });

  it('back and forward hand the page the state of the entry moved to, until unsubscribed', () => {
    const tab = fakeTab('/');
    const history = new PageHistory(tab.host);
    history.record(DNS, 'push');
    history.record(EMAIL, 'push');
    const moved: PageState[] = [];
    const unsubscribe = history.onMove((state) => moved.push(state));

    tab.back();
    tab.forward();
    expect(moved).toEqual([DNS, EMAIL]);

    unsubscribe();
    expect(tab.listeners.size).toBe(0);
    tab.back();
    expect(moved).toHaveLength(2);
  });
});
