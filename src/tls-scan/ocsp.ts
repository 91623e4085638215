// PLACEHOLDER until the OCSP verdict lands (issue 33).
import type { OcspStapling } from '../features/tls-scan/tls-scan.schema.js';

export function checkStaple(
  response: Buffer | null,
  _chain: { leaf: Buffer; issuer: Buffer | undefined },
  _now: Date,
): OcspStapling {
  return {
    stapled: response !== null,
    status: null,
    reason: null,
    produced_at: null,
    this_update: null,
    next_update: null,
    revoked_at: null,
    responder: null,
  };
}
