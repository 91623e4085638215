/** HTTP redirect chains, graded security headers, the embedded TLS evidence and the network behind the host. */

import { inspectVerdict } from '../../client/verdicts';
import {
  HEADER_VERDICT_TONE,
  headerGradeTone,
  httpStatusTone,
  SECURITY_HEADER_NAMES,
} from '../../client/words';
import type { InspectResult } from '../api/types';
import { formatMs } from '../format';
import { Badge, Facts, Mono, Note, Section } from '../ui/common';
import { TlsEvidenceView } from './tls';

type Http = InspectResult['http'];
type Chain = Http['chains']['http'];

function ChainView({ label, chain }: { label: string; chain: Chain }) {
  return (
    <div class="redirects">
      <h4>
        {label} <span class="muted mono">{chain.start_url}</span>
      </h4>
      {chain.status === 'error' && (
        <p class="error-text">
          {chain.error}
          {chain.stage && <span class="muted"> (at {chain.stage})</span>}
        </p>
      )}
      <ol class="chain">
        {chain.hops.map((hop, i) => (
          <li key={`${hop.url}-${i}`}>
            <Badge tone={httpStatusTone(hop.status)}>{hop.status}</Badge>{' '}
            <span class="mono break">{hop.url}</span>
            <span class="muted">
              {' '}
              · HTTP/{hop.http_version} · {formatMs(hop.timings.total)}
            </span>
          </li>
        ))}
      </ol>
      {chain.redirect_limit_reached && <p class="warn-text">Stopped: too many redirects.</p>}
    </div>
  );
}

export function InspectView({ data }: { data: InspectResult }) {
  const { http, security_headers: headers, network } = data;
  const verdict = inspectVerdict(data);
  return (
    <>
      <p class={`verdict tone-${verdict.tone}`}>{verdict.text}</p>
      <p class="muted">
        {data.target_type === 'ip' ? 'Address' : 'Host'} <span class="mono">{data.target}</span>
        {data.addresses.length > 0 && <> resolves to {data.addresses.join(', ')}</>}
      </p>
      <Section title="HTTP">
        {http.status === 'error' && <p class="error-text">{http.error}</p>}
        {http.final && (
          <p>
            Final answer <Badge tone={httpStatusTone(http.final.status)}>{http.final.status}</Badge> from{' '}
            <span class="mono break">{http.final.url}</span>
          </p>
        )}
        <p class="chips">
          {http.redirects_to_https !== null && (
            <Badge tone={http.redirects_to_https ? 'ok' : 'warn'}>
              {http.redirects_to_https ? 'redirects to HTTPS' : 'no redirect to HTTPS'}
            </Badge>
          )}
          <Badge tone={http.http2.negotiated ? 'ok' : 'muted'}>
            {http.http2.negotiated ? 'HTTP/2' : 'no HTTP/2'}
          </Badge>
          {http.http3.advertised && <Badge tone="info">HTTP/3 advertised</Badge>}
        </p>
        {http.timings && (
          <p class="muted">
            DNS {formatMs(http.timings.dns)} · connect {formatMs(http.timings.connect)} · TLS{' '}
            {formatMs(http.timings.tls)} · first byte {formatMs(http.timings.ttfb)} · total{' '}
            {formatMs(http.timings.total)}
          </p>
        )}
        <ChainView label="From" chain={http.chains.https} />
        <ChainView label="From" chain={http.chains.http} />
      </Section>
      <Section title="Security headers">
        {headers.status === 'error' ? (
          <p class="error-text">{headers.error}</p>
        ) : (
          <>
            {headers.grade && (
              <p class="big">
                Grade <Badge tone={headerGradeTone(headers.grade)}>{headers.grade}</Badge>
                {headers.score !== undefined && <span class="muted"> · {headers.score}/100</span>}
              </p>
            )}
            {headers.grade_notes?.map((n) => (
              <p key={n} class="muted">
                {n}
              </p>
            ))}
            <ul class="header-list">
              {(Object.keys(SECURITY_HEADER_NAMES) as (keyof typeof SECURITY_HEADER_NAMES)[]).map((key) => {
                const h = headers[key];
                if (!h) return null;
                return (
                  <li key={key}>
                    <Badge tone={HEADER_VERDICT_TONE[h.verdict]}>{h.verdict}</Badge>{' '}
                    <strong>{SECURITY_HEADER_NAMES[key]}</strong>
                    {h.value && <div class="mono break muted header-value">{h.value}</div>}
                    {h.notes.length > 0 && (
                      <ul class="plain header-notes">
                        {h.notes.map((n) => (
                          <li key={n}>{n}</li>
                        ))}
                      </ul>
                    )}
                  </li>
                );
              })}
            </ul>
          </>
        )}
      </Section>
      {data.tls && (
        <Section title="TLS">
          {data.tls.status === 'ok' ? (
            <TlsEvidenceView tls={data.tls} />
          ) : (
            <p class="error-text">
              {data.tls.error}
              {data.tls.stage && <span class="muted"> (at {data.tls.stage})</span>}
            </p>
          )}
        </Section>
      )}
      <Section title="Network">
        {network.status === 'error' && <p class="error-text">{network.error}</p>}
        {network.addresses.map((a) => (
          <Facts
            key={a.address}
            rows={[
              ['Address', <Mono>{a.address}</Mono>],
              [
                'Reverse DNS',
                a.reverse_dns.names.join(', ') ||
                  (a.reverse_dns.status === 'error' ? a.reverse_dns.error : '—'),
              ],
              ['Origin AS', a.asn !== null ? `AS${a.asn} ${a.holder ?? ''}` : (a.error ?? null)],
              ['Prefix', a.prefix ? <Mono>{a.prefix}</Mono> : null],
              ['Data from', a.source],
            ]}
          />
        ))}
        {network.addresses.length === 0 && network.status !== 'error' && (
          <Note>No addresses to describe.</Note>
        )}
        {network.truncated && <Note>Only the first addresses are described.</Note>}
      </Section>
    </>
  );
}
