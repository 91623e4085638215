/**
 * Writes the test CA and server certificates to a directory, for the real
 * servers the interop scripts start (unbound in scripts/interop-dns.sh,
 * Postfix in scripts/interop-smtp.sh):
 *
 *   npx tsx test/interop/export-test-pki.ts DIR [NAME...]
 *     →  DIR/ca.pem DIR/server.pem DIR/server.key
 *        and for each NAME: DIR/NAME.pem (a leaf for NAME, then the intermediate that
 *        issued it: a chain as public CAs' customers serve it) and DIR/NAME.key
 *
 * The `server` certificate is valid for localhost, 127.0.0.1 and ::1. Nothing
 * is committed: the PKI is generated afresh each run.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { getTestPki } from '../fakes/test-ca.js';

const [dir, ...names] = process.argv.slice(2);
if (!dir) {
  console.error('usage: tsx test/interop/export-test-pki.ts DIR [NAME...]');
  process.exit(2);
}
const pki = await getTestPki();
writeFileSync(join(dir, 'ca.pem'), pki.caPem);
writeFileSync(join(dir, 'server.pem'), pki.server.certPem);
writeFileSync(join(dir, 'server.key'), pki.server.keyPem, { mode: 0o600 });
if (names.length > 0) {
  const intermediate = await pki.issueIntermediate();
  for (const name of names) {
    const leaf = await pki.issue({ dnsNames: [name], issuer: intermediate });
    writeFileSync(join(dir, `${name}.pem`), `${leaf.certPem.trim()}\n${intermediate.certPem.trim()}\n`);
    writeFileSync(join(dir, `${name}.key`), leaf.keyPem, { mode: 0o600 });
  }
}
