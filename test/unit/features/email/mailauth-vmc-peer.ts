/**
 * mailauth's own VMC validation (lib/bimi validateVMC, which runs
 * @postalsys/vmc and then compares the logo), as a reference peer: its
 * verdict on the same certificate and logo netdiag judges. Nothing is
 * fetched: validateVMC takes the files it would download as buffers.
 *
 * package.json's `overrides` make mailauth use the project's undici (its own
 * 8.x needs Node ≥ 22.19 and fails on load under Node 20, where CI also runs;
 * validateVMC never fetches here) and make @postalsys/vmc parse with the
 * project's @peculiar/asn1-* (with a nested older copy the logotype schema
 * registers in the other one, and every VMC fails with "Cannot get schema
 * for 'LogotypeExtn'").
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

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
  return {
    validateVMC: require('mailauth/lib/bimi').validateVMC,
    RootStore: require('@postalsys/vmc').RootStore,
  };
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
