/**
 * A published list kept fresh in the background (the relay egress ranges,
 * the Tor exit list): one adapter mechanism for both.
 *
 *  - start() loads a local copy first (the operator's file, or the copy a
 *    previous run persisted), then downloads in the background: start-up
 *    never waits for the network.
 *  - Downloads are conditional (If-None-Match / If-Modified-Since, RFC 9110
 *    §13.1): a 304 keeps the data and only moves `updatedAt`.
 *  - A new body is parsed completely before the snapshot reference is
 *    replaced, so a lookup sees the old copy or the new one, never a mix; a
 *    failed download or an unusable body keeps the old copy. Outcomes go to
 *    the provider registry, so /api/providers shows a failing refresh.
 *  - The parse is asynchronous and takes the raw body (the relay lists are
 *    parsed in a worker thread, which the body is moved to): the body is
 *    never read here after it has been handed over.
 *  - Successful downloads are written to the cache directory (write to a
 *    temporary file, then rename: atomic on POSIX, so concurrent workers and
 *    crashes never leave half a file) so a restart serves immediately. The
 *    temporary file is written before the parse, which takes the body, and
 *    renamed into place only once the body has parsed.
 *  - Refreshes run every 24 h; after a failure, sooner (1 min, doubling).
 *    Timers are unref'd and close() cancels them, aborts a download and ends
 *    a parse in flight.
 *  - Parsed data that no snapshot holds any more (replaced, or the copy in
 *    use at close()) goes to the caller's release(), which may free what it
 *    holds (the relay lists close their index files).
 *
 * Why one file: load, refresh, persist and release are one state machine over
 * the same snapshot and timers.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, stat, unlink, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { Clock } from '../../cache/types.js';
import { ProviderError } from '../../errors.js';
import { deadlineSignal } from '../deadline.js';
import type { HttpClient } from '../http-client.js';
import { type ProviderRegistry, publicEndpoint } from '../registry.js';
import type { ProviderInfo } from '../types.js';
import { ListFormatError } from './csv.js';

export interface ListSnapshot<T> {
  data: T;
  entries: number;
  /** Epoch ms when this copy was last fetched or confirmed unchanged; for a file, its mtime. */
  updatedAt: number;
  /** The URL it was downloaded from, or the file:// URL it was read from. */
  source: string;
}

export interface ParsedList<T> {
  data: T;
  entries: number;
  skipped: number;
  problems: string[];
}

export interface Scheduler {
  after(ms: number, run: () => void): { cancel(): void };
}

/** Node timers, unref'd so a pending refresh never keeps the process alive. */
export const timerScheduler: Scheduler = {
  after(ms, run) {
    const timer = setTimeout(run, ms);
    timer.unref();
    return { cancel: () => clearTimeout(timer) };
  },
};

export interface ListLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface ListSourceOptions<T> {
  info: ProviderInfo;
  url: string;
  /** When set, the list is read from this file and never downloaded. */
  file?: string | undefined;
  /** Where downloaded copies are persisted; undefined: not persisted. */
  cacheDir?: string | undefined;
  /**
   * Parses a body: a download, the persisted copy or the file, as bytes. It
   * may take the body's memory (transfer it to a worker thread), so the caller
   * never reads `body` after the call. Rejects with ListFormatError for a body
   * that is not the list, and with the signal's reason once aborted (close()).
   */
  parse(body: Buffer, signal: AbortSignal): Promise<ParsedList<T>>;
  /**
   * Lets go of parsed data no snapshot holds any more: the copy a refresh
   * replaced (right after the swap: lookups are synchronous, so none is still
   * reading it), a persisted copy whose parse ended after a download had
   * brought a newer one, and the copy in use at close(). For data that holds
   * a resource (the relay lists' index files).
   */
  release?(data: T): void;
  http: HttpClient;
  registry: ProviderRegistry;
  clock: Clock;
  log: ListLogger;
  scheduler?: Scheduler;
  /** Default 24 h. */
  intervalMs?: number;
  /** First retry after a failure; doubles up to intervalMs. Default 60 s. */
  retryMs?: number;
  /** Whole-download limit. Default 120 s: the relay list is ~12 MB. */
  timeoutMs?: number;
  /** Default 64 MiB, five times today's relay list. */
  maxBytes?: number;
}

interface PersistedMeta {
  url: string;
  etag: string | null;
  last_modified: string | null;
  updated_at: number;
  bytes: number;
}

/** A downloaded body on disk under a temporary name, why it could not be written, or no cache directory. */
type Staged = { tmp: string } | { error: unknown } | { skip: true };

const DAY_MS = 24 * 60 * 60 * 1000;

export class ListSource<T> {
  readonly info: ProviderInfo;
  readonly #opts: ListSourceOptions<T>;
  readonly #scheduler: Scheduler;
  readonly #abort = new AbortController();
  #current: ListSnapshot<T> | undefined;
  #etag: string | null = null;
  #lastModified: string | null = null;
  #fileMtime: number | undefined;
  #inflight: Promise<void> | undefined;
  /** The persisted copy's load, which close() waits for as it does a refresh. */
  #loading: Promise<void> | undefined;
  #timer: { cancel(): void } | undefined;
  #failures = 0;
  #lastError: string | undefined;
  #closed = false;

  constructor(opts: ListSourceOptions<T>) {
    this.info = opts.info;
    this.#opts = opts;
    this.#scheduler = opts.scheduler ?? timerScheduler;
  }

  /** The copy in use; undefined until one has loaded. */
  get current(): ListSnapshot<T> | undefined {
    return this.#current;
  }

  /** Where the data comes from, as shown to clients: the list's URL without credentials or query, or a file's name. */
  get sourceUrl(): string {
    return publicEndpoint(this.#opts.file ?? this.#opts.url, { keepPath: true });
  }

  /** The last refresh's failure (`kind: message`), until a refresh succeeds. */
  get lastError(): string | undefined {
    return this.#lastError;
  }

  /**
   * Loads the local copy (awaited: a disk read, not a download), then starts
   * the background refresh cycle with an immediate download.
   */
  async start(): Promise<void> {
    if (this.#opts.file) {
      await this.refresh();
      return;
    }
    this.#loading = this.#loadPersisted();
    await this.#loading;
    if (!this.#closed) void this.refresh();
  }

  /** One refresh now (concurrent calls share it). Never rejects; the next one is scheduled when it ends. */
  refresh(): Promise<void> {
    this.#inflight ??= this.#refreshOnce().finally(() => {
      this.#inflight = undefined;
      this.#scheduleNext();
    });
    return this.#inflight;
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#timer?.cancel();
    this.#timer = undefined;
    this.#abort.abort();
    await Promise.all([this.#loading, this.#inflight]);
    // No copy in use once closed: a lookup racing the shutdown is told the list is not loaded.
    const current = this.#current;
    this.#current = undefined;
    if (current) this.#opts.release?.(current.data);
  }

  /** Puts a newly parsed copy in use and releases the one it replaces. */
  #swap(next: ListSnapshot<T>): void {
    const previous = this.#current;
    this.#current = next;
    if (previous && previous.data !== next.data) this.#opts.release?.(previous.data);
  }

  #scheduleNext(): void {
    if (this.#closed) return;
    this.#timer?.cancel();
    const interval = this.#opts.intervalMs ?? DAY_MS;
    const retry = this.#opts.retryMs ?? 60_000;
    const delay =
      this.#failures === 0 ? interval : Math.min(interval, retry * 2 ** Math.min(this.#failures - 1, 20));
    this.#timer = this.#scheduler.after(delay, () => {
      this.#timer = undefined;
      void this.refresh();
    });
  }

  async #refreshOnce(): Promise<void> {
    const { info, registry, log } = this.#opts;
    try {
      const outcome = this.#opts.file ? await this.#readFile(this.#opts.file) : await this.#download();
      this.#failures = 0;
      this.#lastError = undefined;
      registry.recordSuccess(info.id);
      log.info({ provider: info.id, outcome, entries: this.#current?.entries }, 'list refreshed');
    } catch (err) {
      if (this.#closed) return;
      const failure = toProviderError(err);
      this.#failures++;
      const message = registry.recordFailure(info.id, failure);
      this.#lastError = message;
      log.warn(
        { provider: info.id, err: message, keeping: this.#current ? 'previous copy' : 'nothing loaded yet' },
        'list refresh failed',
      );
    }
  }

  async #download(): Promise<'updated' | 'unchanged'> {
    const { url, http, clock } = this.#opts;
    const headers: Record<string, string> = { accept: 'text/csv, text/plain;q=0.9, */*;q=0.1' };
    // Validators only when there is a copy to keep: a 304 without one would leave us with nothing.
    if (this.#current) {
      if (this.#etag) headers['if-none-match'] = this.#etag;
      if (this.#lastModified) headers['if-modified-since'] = this.#lastModified;
    }
    // Not AbortSignal.any([..., AbortSignal.timeout()]): Node 20 may collect that timeout before it fires.
    const signal = deadlineSignal(this.#opts.timeoutMs ?? 120_000, this.#abort.signal);
    const res = await http.send(url, {
      headers,
      signal,
      maxBytes: this.#opts.maxBytes ?? 64 * 1024 * 1024,
      maxRedirects: 3,
    });
    const current = this.#current;
    if (res.status === 304 && current && ('if-none-match' in headers || 'if-modified-since' in headers)) {
      this.#current = { ...current, updatedAt: clock() };
      await this.#persistMeta();
      return 'unchanged';
    }
    if (res.status !== 200) throw new ProviderError('http_status', `HTTP ${res.status} from ${hostOf(url)}`);
    const bytes = res.body.length;
    // The parse takes the body: it goes to disk first, under a temporary name until it has parsed.
    const staged = await this.#stage(res.body);
    let kept = false;
    try {
      const parsed = await this.#parse(res.body);
      this.#swap({
        data: parsed.data,
        entries: parsed.entries,
        updatedAt: clock(),
        source: this.sourceUrl,
      });
      this.#etag = headerValue(res.headers.etag);
      this.#lastModified = headerValue(res.headers['last-modified']);
      kept = await this.#persist(staged, bytes);
    } finally {
      if (!kept && 'tmp' in staged) await unlink(staged.tmp).catch(() => {});
    }
    return 'updated';
  }

  async #readFile(file: string): Promise<'updated' | 'unchanged'> {
    let mtime: number;
    let body: Buffer;
    try {
      mtime = (await stat(file)).mtimeMs;
      if (this.#current && mtime === this.#fileMtime) return 'unchanged';
      body = await readFile(file);
    } catch (err) {
      throw new ProviderError('upstream_error', `cannot read ${basename(file)}: ${errorCode(err)}`, {
        cause: err,
      });
    }
    const parsed = await this.#parse(body);
    this.#swap({
      data: parsed.data,
      entries: parsed.entries,
      updatedAt: Math.floor(mtime),
      source: this.sourceUrl,
    });
    this.#fileMtime = mtime;
    return 'updated';
  }

  async #parse(body: Buffer): Promise<ParsedList<T>> {
    let parsed: ParsedList<T>;
    try {
      parsed = await this.#opts.parse(body, this.#abort.signal);
    } catch (err) {
      if (err instanceof ListFormatError)
        throw new ProviderError('bad_response', err.message, { cause: err });
      throw err;
    }
    if (parsed.skipped > 0) {
      this.#opts.log.warn(
        { provider: this.info.id, skipped: parsed.skipped, problems: parsed.problems },
        'list lines skipped',
      );
    }
    return parsed;
  }

  // --- persisted copy -------------------------------------------------------

  /** File names are keyed by provider and URL, so a changed URL never serves another list's copy. */
  #paths(): { body: string; meta: string } | undefined {
    const dir = this.#opts.cacheDir;
    if (!dir) return undefined;
    const key = createHash('sha256').update(this.#opts.url).digest('hex').slice(0, 16);
    const base = join(dir, `${this.info.id}-${key}`);
    return { body: `${base}.list`, meta: `${base}.json` };
  }

  async #loadPersisted(): Promise<void> {
    const paths = this.#paths();
    if (!paths) return;
    let meta: PersistedMeta;
    let body: Buffer;
    try {
      meta = JSON.parse(await readFile(paths.meta, 'utf8')) as PersistedMeta;
      body = await readFile(paths.body);
    } catch (err) {
      if (errorCode(err) !== 'ENOENT') {
        this.#opts.log.warn({ provider: this.info.id, err: errorCode(err) }, 'persisted list unreadable');
      }
      return;
    }
    // The body is renamed into place before its metadata: a mismatch means a crash in between.
    if (meta.url !== this.#opts.url || meta.bytes !== body.length) return;
    try {
      const parsed = await this.#parse(body);
      if (this.#current) {
        this.#opts.release?.(parsed.data); // a refresh that ran meanwhile brought a newer copy
        return;
      }
      this.#swap({
        data: parsed.data,
        entries: parsed.entries,
        updatedAt: meta.updated_at,
        source: this.sourceUrl,
      });
      this.#etag = meta.etag;
      this.#lastModified = meta.last_modified;
      this.#opts.log.info(
        {
          provider: this.info.id,
          entries: parsed.entries,
          updated_at: new Date(meta.updated_at).toISOString(),
        },
        'list loaded from the persisted copy',
      );
    } catch (err) {
      if (this.#closed) return; // the parse was ended by close(): nothing wrong with the copy
      this.#opts.log.warn({ provider: this.info.id, err: String(err) }, 'persisted list unusable');
    }
  }

  /**
   * Writes a downloaded body to a temporary file beside where it will be kept.
   * A failure is only remembered: it is logged if the body turns out usable,
   * as it was when the body was written after its parse.
   */
  async #stage(body: Buffer): Promise<Staged> {
    const paths = this.#paths();
    if (!paths) return { skip: true };
    try {
      await mkdir(this.#opts.cacheDir!, { recursive: true });
      return { tmp: await writeTemporary(paths.body, body) };
    } catch (err) {
      return { error: err };
    }
  }

  /** Renames a staged body into place and writes its metadata; true when the body was kept. */
  async #persist(staged: Staged, bytes: number): Promise<boolean> {
    const paths = this.#paths();
    if (!paths || 'skip' in staged) return false;
    try {
      if ('error' in staged) throw staged.error;
      await rename(staged.tmp, paths.body);
    } catch (err) {
      this.#opts.log.warn({ provider: this.info.id, err: errorCode(err) }, 'could not persist the list');
      return false;
    }
    await this.#persistMeta(bytes);
    return true;
  }

  /** Rewrites the metadata; `bytes` undefined keeps the size already recorded (a 304). */
  async #persistMeta(bytes?: number): Promise<void> {
    const paths = this.#paths();
    if (!paths || !this.#current) return;
    try {
      let size = bytes;
      if (size === undefined) size = (await stat(paths.body)).size;
      const meta: PersistedMeta = {
        url: this.#opts.url,
        etag: this.#etag,
        last_modified: this.#lastModified,
        updated_at: this.#current.updatedAt,
        bytes: size,
      };
      await atomicWrite(paths.meta, JSON.stringify(meta));
    } catch (err) {
      this.#opts.log.warn({ provider: this.info.id, err: errorCode(err) }, 'could not persist list metadata');
    }
  }
}

async function atomicWrite(path: string, data: string | Buffer): Promise<void> {
  const tmp = await writeTemporary(path, data);
  try {
    await rename(tmp, path);
  } catch (err) {
    await unlink(tmp).catch(() => {});
    throw err;
  }
}

/** Writes `data` to a new temporary file beside `path` and returns its name; nothing is left on failure. */
async function writeTemporary(path: string, data: string | Buffer): Promise<string> {
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    await writeFile(tmp, data);
    return tmp;
  } catch (err) {
    await unlink(tmp).catch(() => {});
    throw err;
  }
}

function headerValue(value: string | string[] | undefined): string | null {
  const v = Array.isArray(value) ? value[0] : value;
  return v === undefined || v === '' ? null : v;
}

function errorCode(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : err instanceof Error ? err.message : String(err);
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'upstream';
  }
}

function toProviderError(err: unknown): ProviderError {
  if (err instanceof ProviderError) return err;
  return new ProviderError('upstream_error', err instanceof Error ? err.message : String(err), {
    cause: err,
  });
}
