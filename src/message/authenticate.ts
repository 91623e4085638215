// PLACEHOLDER until the DKIM/ARC module lands (issue 34).
import type { Arc, DkimSignature } from '../features/message/message.schema.js';

export type KeyResolver = (name: string, type: 'TXT') => Promise<string[][]>;

export async function authenticateMessage(
  _raw: Buffer,
  _opts: { resolver: KeyResolver; now: Date; headersOnly: boolean },
): Promise<{
  dkim: DkimSignature[];
  arc: Arc;
  headerFrom: { address: string | null; domain: string | null };
  notes: string[];
}> {
  return {
    dkim: [],
    arc: { result: 'none', instances: 0, chain: [], broken_at: null, reason: null },
    headerFrom: { address: null, domain: null },
    notes: [],
  };
}
