/**
 * mailauth's SPF result for one sender (a peer implementation, in strict RFC
 * 7208 mode) over a fake DNS server, asked through node's own resolver: the
 * reference netdiag's SPF answers are compared with, on the same zones.
 */
import { Resolver } from 'node:dns/promises';
import { createRequire } from 'node:module';

interface MailauthSpf {
  spf(opts: {
    sender: string;
    ip: string;
    helo: string;
    mta: string;
    strict: boolean;
    resolver: (name: string, type: string) => Promise<unknown>;
  }): Promise<{ status: { result: string }; explanation?: string; lookups?: { count: number } }>;
}
const mailauth = createRequire(import.meta.url)('mailauth/lib/spf') as MailauthSpf;

export interface PeerSpfResult {
  result: string;
  explanation: string | undefined;
  /** The DNS-querying terms mailauth counted before it stopped. */
  lookups: number | undefined;
}

/** `server` is the fake DNS server's `udp` address (udp://host:port). */
export async function mailauthSpf(
  server: string,
  query: { ip: string; sender: string; helo: string },
): Promise<PeerSpfResult> {
  const resolver = new Resolver({ timeout: 5_000, tries: 1 });
  resolver.setServers([server.replace('udp://', '')]);
  const result = await mailauth.spf({
    ...query,
    mta: 'netdiag.test',
    strict: true,
    resolver: (name, type) => resolver.resolve(name, type),
  });
  return { result: result.status.result, explanation: result.explanation, lookups: result.lookups?.count };
}
