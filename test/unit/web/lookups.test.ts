import { describe, expect, it } from 'vitest';
import { type Call, get, type Outcome } from '../../../src/web/api/client';
import { AnswerCache, type Lookup, type LookupPart, Lookups } from '../../../src/web/lookups';
import { deferred, failed, ok, settle } from './outcomes';

interface PendingCall {
  call: Call;
  signal: AbortSignal;
  answer: (outcome: Outcome<unknown>) => void;
}

/**
 * A call runner whose answers the test sends, in the order it likes. Like the real one
 * it rejects a call when its signal aborts, unless `ignoresAbort` (an answer already on
 * its way when the abort came).
 */
function fakeApi(opts: { ignoresAbort?: boolean } = {}) {
  const calls: PendingCall[] = [];
  const run = (call: Call, signal: AbortSignal): Promise<Outcome<unknown>> => {
    const d = deferred<Outcome<unknown>>();
    if (!opts.ignoresAbort) signal.addEventListener('abort', () => d.reject(signal.reason));
    calls.push({ call, signal, answer: d.resolve });
    return d.promise;
  };
  return { calls, run };
}

const dns = (name: string): LookupPart => ({ call: get('/api/dns', { target: name, type: 'A' }) });

/** Every lookup the store published, in order. */
function recorder(lookups: Lookups<LookupPart, string>) {
  const seen: (Lookup<LookupPart, string> | null)[] = [];
  lookups.subscribe((l) => seen.push(l));
  return seen;
}

describe('Lookups', () => {
  it('shows a new lookup at once, each part pending, then each answer in its own part as it arrives', async () => {
    const api = fakeApi();
    const lookups = new Lookups<LookupPart, string>({ run: api.run, clock: () => 42 });
    const seen = recorder(lookups);

    lookups.start('example.test', [dns('a.test'), dns('b.test')], { reuse: false });
    expect(lookups.current).toMatchObject({ id: 1, info: 'example.test', started: 42 });
    expect(lookups.current?.parts.map((p) => p.outcome)).toEqual([undefined, undefined]);
    expect(api.calls.map((c) => c.call.query?.target)).toEqual(['a.test', 'b.test']);

    api.calls[1]?.answer(ok('b'));
    await settle();
    expect(lookups.current?.parts.map((p) => p.outcome)).toEqual([undefined, ok('b')]);
    api.calls[0]?.answer(failed(502, 'every provider failed'));
    await settle();
    expect(lookups.current?.parts.map((p) => p.outcome)).toEqual([
      failed(502, 'every provider failed'),
      ok('b'),
    ]);
    expect(seen).toHaveLength(3);
  });

  it('a new lookup aborts the one under way: its signal fires, the new one’s does not', () => {
    const api = fakeApi();
    const lookups = new Lookups<LookupPart, string>({ run: api.run });

    lookups.start('first', [dns('first.test'), dns('first.test')], { reuse: false });
    const [a, b] = api.calls;
    expect(a?.signal.aborted).toBe(false);
    lookups.start('second', [dns('second.test')], { reuse: false });

    expect(a?.signal.aborted).toBe(true);
    expect(b?.signal.aborted).toBe(true);
    expect(api.calls[2]?.signal.aborted).toBe(false);
    expect(lookups.current).toMatchObject({ id: 2, info: 'second' });
  });

  it('never shows a stale answer: an older lookup that answers after a newer one started is dropped', async () => {
    const api = fakeApi({ ignoresAbort: true });
    const lookups = new Lookups<LookupPart, string>({ run: api.run });
    const seen = recorder(lookups);

    lookups.start('older', [dns('older.test')], { reuse: false });
    lookups.start('newer', [dns('newer.test')], { reuse: false });
    api.calls[0]?.answer(ok('older answer'));
    await settle();

    expect(lookups.current).toMatchObject({ id: 2, info: 'newer' });
    expect(lookups.current?.parts[0]?.outcome).toBeUndefined();
    expect(seen.flatMap((l) => l?.parts.map((p) => p.outcome) ?? [])).not.toContainEqual(ok('older answer'));

    api.calls[1]?.answer(ok('newer answer'));
    await settle();
    expect(lookups.current?.parts[0]?.outcome).toEqual(ok('newer answer'));
  });

  it('clear aborts the lookup under way and shows none; its late answer stays unseen', async () => {
    const api = fakeApi({ ignoresAbort: true });
    const lookups = new Lookups<LookupPart, string>({ run: api.run });
    lookups.start('gone', [dns('gone.test')], { reuse: false });
    lookups.clear();

    expect(api.calls[0]?.signal.aborted).toBe(true);
    expect(lookups.current).toBeNull();
    api.calls[0]?.answer(ok('late'));
    await settle();
    expect(lookups.current).toBeNull();
  });

  it('an unsubscribed listener hears nothing more', () => {
    const lookups = new Lookups<LookupPart, string>({ run: fakeApi().run });
    const heard: unknown[] = [];
    const unsubscribe = lookups.subscribe((l) => heard.push(l));
    lookups.start('one', [dns('one.test')], { reuse: false });
    unsubscribe();
    lookups.start('two', [dns('two.test')], { reuse: false });
    expect(heard).toHaveLength(1);
  });

  describe('kept answers (back/forward)', () => {
    /** A store on a clock the test moves, whose API answers every call at once with `answer`. */
    function setup(answer: (call: Call) => Outcome<unknown>) {
      let now = 0;
      const calls: Call[] = [];
      const lookups = new Lookups<LookupPart, string>({
        run: async (call) => {
          calls.push(call);
          return answer(call);
        },
        cache: new AnswerCache(5 * 60_000, () => now),
      });
      return {
        lookups,
        calls,
        at: (ms: number) => {
          now = ms;
        },
        /** Looks `names` up, started by the user or by moving back to it, and lets the answers arrive. */
        lookUp: async (via: 'user' | 'back', ...names: string[]) => {
          lookups.start(names.join(' '), names.map(dns), { reuse: via === 'back' });
          await settle();
        },
      };
    }

    it('moving back to a lookup answered within five minutes shows its answer without calling again', async () => {
      const { lookups, calls, at, lookUp } = setup(() => ok('answer'));
      await lookUp('user', 'x.test');
      at(5 * 60_000 - 1);
      await lookUp('back', 'x.test');

      expect(calls).toHaveLength(1);
      expect(lookups.current).toMatchObject({ id: 2 });
      expect(lookups.current?.parts[0]?.outcome).toEqual(ok('answer'));
    });

    it('keeps nothing of a lookup started with remember: false (a pasted message), even moving back to it', async () => {
      const { lookups, calls, lookUp } = setup(() => ok('answer'));
      lookups.start('x.test', [dns('x.test')], { reuse: false, remember: false });
      await settle();
      expect(lookups.current?.parts[0]?.outcome).toEqual(ok('answer'));
      await lookUp('back', 'x.test');
      expect(calls).toHaveLength(2);
    });

    it('only back/forward reuses: a lookup the user starts again always asks the API', async () => {
      const { calls, lookUp } = setup(() => ok('answer'));
      await lookUp('user', 'x.test');
      await lookUp('user', 'x.test');
      expect(calls).toHaveLength(2);
    });

    it('an answer five minutes old or more is asked for again', async () => {
      const { calls, at, lookUp } = setup(() => ok('answer'));
      await lookUp('user', 'x.test');
      at(5 * 60_000);
      await lookUp('back', 'x.test');
      expect(calls).toHaveLength(2);
    });

    it('errors are never kept: moving back to a failed lookup asks again', async () => {
      const { calls, lookUp } = setup(() => failed(502, 'every provider failed'));
      await lookUp('user', 'x.test');
      await lookUp('back', 'x.test');
      expect(calls).toHaveLength(2);
    });

    it('answers are kept per call: only the parts without a kept answer are asked for', async () => {
      const { lookups, calls, lookUp } = setup(() => ok('answer'));
      await lookUp('user', 'x.test');
      await lookUp('back', 'x.test', 'y.test');
      expect(calls.map((c) => c.query?.target)).toEqual(['x.test', 'y.test']);
      expect(lookups.current?.parts.map((p) => p.outcome)).toEqual([ok('answer'), ok('answer')]);
    });

    it('showing a kept answer keeps it five minutes more', async () => {
      const { calls, at, lookUp } = setup(() => ok('answer'));
      await lookUp('user', 'x.test');
      at(4 * 60_000);
      await lookUp('back', 'x.test');
      at(8 * 60_000);
      await lookUp('back', 'x.test');
      expect(calls).toHaveLength(1);
    });

    it('an answer that arrives after its lookup was replaced is not shown, yet kept for back/forward', async () => {
      const api = fakeApi({ ignoresAbort: true });
      const lookups = new Lookups<LookupPart, string>({ run: api.run });
      lookups.start('x', [dns('x.test')], { reuse: false });
      lookups.start('y', [dns('y.test')], { reuse: false });
      api.calls[0]?.answer(ok('x answer'));
      await settle();
      expect(lookups.current?.parts[0]?.outcome).toBeUndefined();

      lookups.start('x', [dns('x.test')], { reuse: true });
      await settle();
      expect(api.calls).toHaveLength(2);
      expect(lookups.current?.parts[0]?.outcome).toEqual(ok('x answer'));
    });
  });
});
