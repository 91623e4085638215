/**
 * Writes the test CA and its loopback server certificate to a directory, for
 * a real resolver (unbound) started by scripts/interop-dns.sh:
 *
 *   npx tsx test/interop/export-test-pki.ts DIR  →  DIR/ca.pem DIR/server.pem DIR/server.key
 *
 * The certificate is valid for localhost, 127.0.0.1 and ::1. Nothing is
 * committed: the PKI is generated afresh each run.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { getTestPki } from '../fakes/test-ca.js';

const dir = process.argv[2];
if (!dir) {
  console.error('usage: tsx test/interop/export-test-pki.ts DIR');
  process.exit(2);
}
const pki = await getTestPki();
writeFileSync(join(dir, 'ca.pem'), pki.caPem);
writeFileSync(join(dir, 'server.pem'), pki.server.certPem);
writeFileSync(join(dir, 'server.key'), pki.server.keyPem, { mode: 0o600 });
