/**
 * The page's state in the browser's history: a lookup puts its state in the
 * address bar (a new entry, or in place of the one the page opened with), and
 * back/forward hands the state of the entry moved to back to the page, which
 * shows it again (from the answers it kept, see lookups.ts).
 */
import { type PageState, readState, stateSearch } from './state';

/**
 * How a lookup was started, which decides what happens to the address bar:
 * `push` a new entry (a lookup the user asked for), `replace` the current one
 * (the page opened on a query), or leave it: `history` (the browser already
 * moved there) and `stay` (a retry of what is on show).
 */
export type Navigation = 'push' | 'replace' | 'history' | 'stay';

/** The part of `window` this uses, so tests hand it a fake. */
export interface HistoryHost {
  readonly location: { readonly pathname: string; readonly search: string };
  readonly history: {
    pushState(data: null, unused: string, url: string): void;
    replaceState(data: null, unused: string, url: string): void;
  };
  addEventListener(type: 'popstate', listener: () => void): void;
  removeEventListener(type: 'popstate', listener: () => void): void;
}

export class PageHistory {
  constructor(private readonly host: HistoryHost) {}

  /** The state the address bar holds now. */
  read(): PageState {
    return readState(this.host.location.search);
  }

  /** Puts `state` in the address bar as `nav` says; pushing the entry already on show adds none. */
  record(state: PageState, nav: Navigation): void {
    const url = `/${stateSearch(state)}`;
    const { pathname, search } = this.host.location;
    if (nav === 'push' && url !== pathname + search) this.host.history.pushState(null, '', url);
    if (nav === 'replace') this.host.history.replaceState(null, '', url);
  }

  /** Calls `listener` with the state of every entry back/forward moves to; returns the unsubscribe. */
  onMove(listener: (state: PageState) => void): () => void {
    const onPop = () => listener(this.read());
    this.host.addEventListener('popstate', onPop);
    return () => this.host.removeEventListener('popstate', onPop);
  }
}
