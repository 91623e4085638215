/**
 * The TLS configuration scan: the verdict first (the grade large, the sentence the CLI and /mcp say
 * too: client/verdicts.ts tlsScanVerdict), then what the server accepts protocol by protocol (its
 * suites in the server's order, each in its NCSC-NL class's colour), the key-exchange groups, one
 * folded card per certificate key type, the OCSP staple, the features, the findings and ratings,
 * and what the scan cost. A target that could not be scanned is the error banner, as the TLS tool's.
 */

import { type ScanProtocolView, scanProtocols, tlsScanVerdict } from '../../client/verdicts';
import {
  chainKeyText,
  commonName,
  NCSC_CLASS,
  type NcscClass,
  SCAN_FINDING_TONE,
  scanFeatureRows,
  TLS_VERDICT,
} from '../../client/words';
import type { TlsScanCertificate, TlsScanResult, TlsScanResultOk } from '../api/types';
import { formatDateTime, formatMs, plural } from '../format';
import { Badge, Facts, Mono, Note, Section } from '../ui/common';
import { TlsFindings } from './tls';

function Ncsc({ ncsc }: { ncsc: NcscClass }) {
  return <Badge tone={NCSC_CLASS[ncsc].tone}>{NCSC_CLASS[ncsc].label}</Badge>;
}

function Protocols({ protocols }: { protocols: readonly ScanProtocolView[] }) {
  return (
    <ul class="scan-protocols">
      {protocols.map((p) => (
        <li key={p.name} class={`tone-${p.tone}`} data-protocol={p.name} data-offered={String(p.offered)}>
          <Badge tone={p.tone}>{p.text}</Badge>{' '}
          {p.offered ? 'offered' : <span class="muted">not offered</span>}
          {p.offered && p.ncsc && (
            <>
              {' '}
              <Ncsc ncsc={p.ncsc} />
            </>
          )}
        </li>
      ))}
    </ul>
  );
}

function Suites({ protocol: p }: { protocol: ScanProtocolView }) {
  return (
    <div class="scan-suites" data-protocol={p.name}>
      <h4>
        {p.text} <span class="muted scan-preference">{p.preference}</span>
      </h4>
      <div class="table-break">
        <table class="stack">
          <thead>
            <tr>
              <th scope="col">#</th>
              <th scope="col">Cipher suite</th>
              <th scope="col">Key exchange</th>
              <th scope="col">Encryption</th>
              <th scope="col">Strength</th>
            </tr>
          </thead>
          <tbody>
            {p.suites.map((s, i) => (
              <tr key={s.code} class={`scan-suite tone-${NCSC_CLASS[s.ncsc].tone}`} data-ncsc={s.ncsc}>
                <td data-label="#" class="num">
                  {i + 1}
                </td>
                <td data-label="Cipher suite">
                  <span class="mono break suite-name">{s.name}</span>
                  {s.openssl_name && s.openssl_name !== s.name && (
                    <span class="muted mono break"> {s.openssl_name}</span>
                  )}
                </td>
                <td data-label="Key exchange">
                  {s.key_exchange} · {s.authentication}
                </td>
                <td data-label="Encryption">
                  {s.encryption} {s.bits} bits{s.export && <Badge tone="bad">export</Badge>}
                </td>
                <td data-label="Strength">
                  <Ncsc ncsc={s.ncsc} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </div>
  );
}

function Certificate({ cert: c }: { cert: TlsScanCertificate }) {
  const { tone, label } = TLS_VERDICT[c.verdict.status];
  return (
    <details class="mx-tls scan-cert" data-key-type={c.key_type}>
      <summary>
        {c.key_type}
        {c.key_bits ? ` ${c.key_bits} bits` : ''} <Mono>{commonName(c.leaf.subject)}</Mono>{' '}
        <Badge tone={tone}>{label}</Badge> <span class="muted">{c.leaf.days_remaining} days left</span>
      </summary>
      <p>{c.verdict.summary}</p>
      <TlsFindings findings={c.findings} />
      <Facts
        rows={[
          ['Subject', <span class="mono break">{c.leaf.subject}</span>],
          ['Issuer', <span class="mono break">{c.leaf.issuer}</span>],
          ['Valid', `${formatDateTime(c.leaf.not_before)} → ${formatDateTime(c.leaf.not_after)}`],
          ['Names', c.leaf.san.length ? <span class="mono break">{c.leaf.san.join(', ')}</span> : null],
          ['Signature', c.leaf.signature_algorithm],
          ['Served over', c.protocol],
          ['Not trusted', c.authorization_error],
          ['SHA-256', <span class="mono break">{c.fingerprint_sha256}</span>],
          [
            'Chain',
            c.chain.map((x) => `${commonName(x.subject)} (${chainKeyText(x.key)})`).join(' → ') || null,
          ],
        ]}
      />
    </details>
  );
}

function Findings({ scan }: { scan: TlsScanResultOk }) {
  if (scan.findings.length === 0) return null;
  return (
    <Section title="Findings">
      <ul class="findings scan-findings">
        {scan.findings.map((f, i) => (
          <li key={`${f.code}-${i}`} data-code={f.code}>
            <Badge tone={SCAN_FINDING_TONE[f.severity]}>{f.severity}</Badge> {f.message}
            {f.references.length > 0 && <span class="muted scan-refs"> ({f.references.join(', ')})</span>}
          </li>
        ))}
      </ul>
    </Section>
  );
}

function Ratings({ scan }: { scan: TlsScanResultOk }) {
  const { mozilla, ncsc } = scan.ratings;
  if (mozilla.gaps.length === 0 && ncsc.reasons.length === 0) return null;
  return (
    <Section title="Ratings">
      {mozilla.gaps.length > 0 && (
        <div class="scan-gaps">
          <p>
            Mozilla ({mozilla.version}): {mozilla.meets ? `meets ${mozilla.meets}` : 'meets none'}
          </p>
          <ul>
            {mozilla.gaps.map((g) => (
              <li key={g.level} data-level={g.level}>
                Not {g.level}: {g.reasons.join('; ')}
              </li>
            ))}
          </ul>
        </div>
      )}
      {ncsc.reasons.length > 0 && (
        <div class="scan-ncsc">
          <p>
            NCSC-NL ({ncsc.version}): <Ncsc ncsc={ncsc.overall} />
          </p>
          <ul>
            {ncsc.reasons.map((r) => (
              <li key={r}>{r}</li>
            ))}
          </ul>
        </div>
      )}
    </Section>
  );
}

function Scan({ scan }: { scan: TlsScanResultOk }) {
  const verdict = tlsScanVerdict(scan);
  const protocols = scanProtocols(scan);
  const ocsp = scan.ocsp_stapling;
  const noSni = scan.without_sni;
  return (
    <>
      <div class={`tls-verdict scan-verdict tone-${verdict.tone}`}>
        <p class="tls-result">{scan.grade}</p>
        <p>{verdict.text}</p>
      </div>
      <Section title="Protocols">
        <Protocols protocols={protocols} />
      </Section>
      <Section title="Cipher suites">
        {protocols
          .filter((p) => p.suites.length > 0)
          .map((p) => (
            <Suites key={p.name} protocol={p} />
          ))}
      </Section>
      <Section title="Key exchange">
        <ul class="chips scan-groups">
          {scan.groups.map((g) => (
            <li key={`${g.protocol}-${g.name}`} data-group={g.name}>
              <Badge tone={NCSC_CLASS[g.ncsc].tone}>{g.name}</Badge>
              {g.kind === 'hybrid_pq' && <Badge tone="info">post-quantum hybrid</Badge>}
            </li>
          ))}
        </ul>
        <Facts
          rows={[
            ['Groups', scan.groups.length === 0 ? 'none seen' : null],
            [
              'DHE',
              scan.dhe ? (
                <Badge tone={NCSC_CLASS[scan.dhe.ncsc].tone}>
                  {scan.dhe.bits} bits{scan.dhe.group ? ` (${scan.dhe.group})` : ', the server’s own prime'}
                </Badge>
              ) : null,
            ],
          ]}
        />
      </Section>
      <Section title={scan.certificates.length === 1 ? 'Certificate' : 'Certificates'}>
        {scan.certificates.map((c) => (
          <Certificate key={c.fingerprint_sha256} cert={c} />
        ))}
        {noSni && (
          <p class="scan-nosni">
            Without SNI:{' '}
            {noSni.fingerprint_sha256 === null
              ? `no certificate (${noSni.error ?? 'no handshake'})`
              : noSni.same_as_sni
                ? 'the same certificate'
                : `another certificate, ${commonName(noSni.subject ?? '')}`}
          </p>
        )}
      </Section>
      <Section title="OCSP stapling">
        <Facts
          rows={[
            [
              'Staple',
              ocsp.stapled ? (
                <Badge tone={ocsp.status === 'good' ? 'ok' : ocsp.status === 'unknown' ? 'warn' : 'bad'}>
                  {ocsp.status ?? 'stapled'}
                </Badge>
              ) : (
                <Badge tone="muted">not stapled</Badge>
              ),
            ],
            ['Why', ocsp.reason],
            ['Revoked', ocsp.revoked_at ? formatDateTime(ocsp.revoked_at) : null],
            ['Produced', ocsp.produced_at ? formatDateTime(ocsp.produced_at) : null],
            [
              'Valid',
              ocsp.this_update
                ? `${formatDateTime(ocsp.this_update)} → ${ocsp.next_update ? formatDateTime(ocsp.next_update) : 'no next update'}`
                : null,
            ],
            ['Responder', ocsp.responder ? <span class="mono break">{ocsp.responder}</span> : null],
          ]}
        />
      </Section>
      <Section title="Features">
        <table class="scan-features">
          <tbody>
            {scanFeatureRows(scan.features).map((r) => (
              <tr key={r.name}>
                <th scope="row">{r.name}</th>
                <td>
                  <Badge tone={r.tone}>{r.text}</Badge>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </Section>
      <Findings scan={scan} />
      <Ratings scan={scan} />
      {scan.notes.length > 0 && (
        <ul class="scan-notes">
          {scan.notes.map((n) => (
            <li key={n}>{n}</li>
          ))}
        </ul>
      )}
      <Note>
        <span class="scan-cost">
          {plural(scan.handshakes, 'handshake')} of at most {scan.handshake_budget},{' '}
          {formatMs(scan.elapsed_ms)}
        </span>{' '}
        to <Mono>{scan.address}</Mono> port {scan.port}
        {scan.complete ? '' : ' (ended early)'}. Scanned {formatDateTime(scan.scanned_at)}.
      </Note>
    </>
  );
}

export function TlsScanView({ data }: { data: TlsScanResult }) {
  const { scan } = data;
  if (scan.status === 'ok') return <Scan scan={scan} />;
  return (
    <div class="tls-verdict tone-bad">
      <p class="tls-result">no scan</p>
      <p>{tlsScanVerdict(scan).text}</p>
    </div>
  );
}
