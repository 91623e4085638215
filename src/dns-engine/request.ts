/**
 * One request's bookkeeping: the queries it sent against its budget, the
 * findings, the name-server lookups under way (to see a delegation loop), and
 * how many name-server names turned out not to exist (NXNS). Everything a
 * resolution and its nested name-server lookups share, and nothing that
 * outlives the request.
 *
 * The bounds are unbound's (iterator/iterator.h, util/config_file.c), so the
 * engine gives up where a production resolver does:
 *   MAX_TARGET_NX 5            NXDOMAIN name-server lookups per request
 *   MAX_DP_TARGET_COUNT 16     name-server lookups per zone cut
 *   max-query-restarts 11      CNAME hops
 *   target-fetch-policy depth  4 nested name-server lookups
 * and the budget, 150 queries, stands where unbound's MAX_GLOBAL_QUOTA (200)
 * and max-sent-count (32 per question) leave an ordinary resolution far below.
 */
import type { EngineFinding, QueryLog } from './types.js';

export const DEFAULT_QUERY_BUDGET = 150;
export const MAX_TARGET_NX = 5;
export const MAX_NS_LOOKUPS_PER_CUT = 16;
export const MAX_CNAME_HOPS = 11;
export const MAX_DEPTH = 4;
export const MAX_REFERRALS = 30;

/**
 * Thrown to end a resolution (or only the name-server lookup it arose in, when not
 * `fatal`), once its finding is recorded.
 */
export class Stopped extends Error {
  override readonly name = 'Stopped';
  constructor(
    readonly finding: EngineFinding,
    /** true: the whole request ends (the budget, the NXNS limit); false: only this lookup fails. */
    readonly fatal: boolean,
  ) {
    super(finding.detail);
  }
}

export class RequestState {
  readonly queries: QueryLog[] = [];
  readonly findings: EngineFinding[] = [];
  readonly signal: AbortSignal;
  readonly budget: number;
  /** Name-server names being looked up, outermost first. */
  readonly lookups: string[] = [];
  #sent = 0;
  #nxTargets = 0;

  constructor(budget: number, signal: AbortSignal) {
    this.budget = budget;
    this.signal = signal;
  }

  get sent(): number {
    return this.#sent;
  }

  /** Takes one query from the budget, or ends the request when it is spent. */
  spend(zone: string): void {
    if (this.#sent >= this.budget) {
      throw this.stop(
        {
          code: 'budget_exhausted',
          severity: 'error',
          zone,
          detail: `the request's budget of ${this.budget} queries is spent`,
        },
        true,
      );
    }
    this.#sent += 1;
  }

  /** Counts a name-server name that does not exist; past MAX_TARGET_NX the request ends. */
  nxTarget(zone: string, name: string): void {
    this.#nxTargets += 1;
    if (this.#nxTargets > MAX_TARGET_NX) {
      throw this.stop(
        {
          code: 'nxns_referral',
          severity: 'error',
          zone,
          name,
          detail:
            `${this.#nxTargets} name-server names do not exist (the last ${name}, a name server of ${zone}); ` +
            `no more are looked up (at most ${MAX_TARGET_NX} per request, as unbound: the NXNS attack, CVE-2020-12662)`,
        },
        true,
      );
    }
  }

  /** Records a finding once (the same code for the same zone, server and name is said once). */
  report(finding: EngineFinding): void {
    const same = this.findings.some(
      (f) =>
        f.code === finding.code &&
        f.zone === finding.zone &&
        f.server === finding.server &&
        f.name === finding.name,
    );
    if (!same) this.findings.push(finding);
  }

  /** Records the finding and returns what to throw. */
  stop(finding: EngineFinding, fatal = false): Stopped {
    this.report(finding);
    return new Stopped(finding, fatal);
  }
}
