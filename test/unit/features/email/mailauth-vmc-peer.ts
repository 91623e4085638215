/**
 * mailauth's own VMC validation (lib/bimi validateVMC, which runs
 * @postalsys/vmc and then compares the logo), as a reference peer: its
 * verdict on the same certificate and logo netdiag judges. Nothing is
 * fetched: validateVMC takes the files it would download as buffers.
 *
 * Two module resolutions are redirected while mailauth loads, both faults
 * of this install rather than of mailauth's logic:
 * - mailauth's own undici (8.x) needs Node ≥ 22.19 and fails on load under
 *   older Node; validateVMC never fetches here, so the project's undici
 *   stands in.
 * - @postalsys/vmc pins @peculiar/asn1-schema 2.8.0 (nested under it here,
 *   because the project depends on 2.11), while the logotype schema it
 *   parses with registers in the top-level copy: its parser then finds no
 *   schema ("Cannot get schema for 'LogotypeExtn' target") and every VMC
 *   fails. Both parse with the project's copies, as a standalone mailauth
 *   install would with one.
 */
import Module, { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

interface Resolver {
  _resolveFilename(request: string, parent: { filename?: string } | undefined, ...rest: unknown[]): string;
}

interface ValidateVmcResult {
  location?: { success: boolean };
  authority?: { success: boolean; hashMatch?: boolean; error?: { code?: string; message: string } };
}

type ValidateVmc = (
  data: {
    status: { header: { selector: string; d: string } };
    location: string;
    locationPath: Buffer;
    authority: string;
    authorityPath: Buffer;
  },
  opts: { rootStore: unknown; now?: Date },
) => Promise<ValidateVmcResult>;

function loadPeer(): {
  validateVMC: ValidateVmc;
  RootStore: { create(): { addCert(pem: string): boolean } };
} {
  const resolver = Module as unknown as Resolver;
  const original = resolver._resolveFilename;
  const own: Record<string, string> = {
    undici: require.resolve('undici'),
    '@peculiar/asn1-schema': require.resolve('@peculiar/asn1-schema'),
    '@peculiar/asn1-x509': require.resolve('@peculiar/asn1-x509'),
  };
  resolver._resolveFilename = function (request, parent, ...rest) {
    const from = parent?.filename ?? '';
    const redirect =
      (request === 'undici' && from.includes('/node_modules/mailauth/')) ||
      (request.startsWith('@peculiar/') && from.includes('/node_modules/@postalsys/vmc/'));
    return redirect && own[request] ? own[request] : original.call(this, request, parent, ...rest);
  };
  try {
    return {
      validateVMC: require('mailauth/lib/bimi').validateVMC,
      RootStore: require('@postalsys/vmc').RootStore,
    };
  } finally {
    resolver._resolveFilename = original;
  }
}

let peer: ReturnType<typeof loadPeer> | undefined;

export interface PeerVerdict {
  valid: boolean;
  /** mailauth's error code when it refused the VMC, or 'hash mismatch' when only the l= comparison failed. */
  reason?: string;
}

/**
 * Whether mailauth would show the logo on the strength of this VMC: its
 * authority check succeeded and the l= logo matched (the condition under
 * which it builds the BIMI-Indicator header).
 */
export async function mailauthVerdict(opts: {
  pem: string;
  svg: string;
  domain: string;
  selector?: string;
  /** Roots trusted besides @postalsys/vmc's own (the test MVA). */
  extraRoots?: string[];
  now?: Date;
}): Promise<PeerVerdict> {
  peer ??= loadPeer();
  const rootStore = peer.RootStore.create();
  for (const pem of opts.extraRoots ?? []) rootStore.addCert(pem);
  const result = await peer.validateVMC(
    {
      status: { header: { selector: opts.selector ?? 'default', d: opts.domain } },
      location: `https://${opts.domain}/logo.svg`,
      locationPath: Buffer.from(opts.svg),
      authority: `https://${opts.domain}/vmc.pem`,
      authorityPath: Buffer.from(opts.pem),
    },
    { rootStore, ...(opts.now ? { now: opts.now } : {}) },
  );
  const authority = result.authority;
  if (!authority?.success)
    return { valid: false, reason: authority?.error?.code ?? authority?.error?.message };
  if (authority.hashMatch === false) return { valid: false, reason: 'hash mismatch' };
  return { valid: true };
}
