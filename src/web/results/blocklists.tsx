/**
 * One blocklist answer (GET /api/blocklists): the API's summary first, under the verdict, then a
 * grid of lists, one cell per list, listings first: its name and zone, its status in its tone and
 * what the answer means (client/blocklists.ts, which the CLI and /mcp say too). A listing is red,
 * with its code's meaning, the list's TXT reason and its delisting page; a refusal amber, saying
 * the list declined and why (never red: it is no listing); an error grey; a broken list grey with
 * why it is not counted; not listed green. For a domain, each MX host's addresses, each with its
 * own line of how many lists list it and its own small grid.
 */
import {
  addressLine,
  type BlocklistEntry,
  blocklistsVerdict,
  countsText,
  LIST_STATUS,
  listsInOrder,
  listWhy,
} from '../../client/blocklists';
import type { BlocklistsResult } from '../api/types';
import { formatDateTime } from '../format';
import { Badge, DnsName, Note, Section } from '../ui/common';

function ListCell({ list }: { list: BlocklistEntry }) {
  const status = LIST_STATUS[list.status];
  return (
    <li class={`bl-cell tone-${status.tone}`} data-status={list.status} data-zone={list.zone}>
      <span class="bl-name">{list.name}</span>
      <span class="bl-zone mono">
        <DnsName name={list.zone} />
      </span>
      <span class="bl-status">{status.label}</span>
      <span class="bl-why">{listWhy(list)}</span>
      {list.status === 'listed' && list.reason && (
        <span class="bl-reason">
          <span class="muted">Reason: </span>
          {list.reason}
        </span>
      )}
      {list.status === 'listed' && list.delist_url && (
        <a class="bl-delist" href={list.delist_url} rel="noreferrer noopener" target="_blank">
          Request delisting
        </a>
      )}
    </li>
  );
}

function Grid({ lists, small }: { lists: readonly BlocklistEntry[]; small?: boolean }) {
  return (
    <ul class={`bl-grid${small ? ' bl-grid-small' : ''}`}>
      {listsInOrder(lists).map((l) => (
        <ListCell key={`${l.kind}-${l.zone}`} list={l} />
      ))}
    </ul>
  );
}

function Mx({ mx }: { mx: NonNullable<BlocklistsResult['mx']> }) {
  if (mx.length === 0) return <Note>The domain has no MX host to check.</Note>;
  return (
    <ul class="bl-mx">
      {mx.map((h) => (
        <li key={h.host} class="bl-mx-host" data-host={h.host}>
          <strong class="mono break">
            <DnsName name={h.host} />
          </strong>
          {h.addresses.length === 0 && <p class="muted">No address found.</p>}
          {h.addresses.map((a) => (
            <div key={a.address} class="bl-mx-address" data-address={a.address}>
              <p class="bl-address-line">
                <code class="mono break">{a.address}</code>{' '}
                <Badge tone={a.listed_count > 0 ? 'bad' : 'ok'}>
                  <span class="bl-count">{addressLine(a)}</span>
                </Badge>
              </p>
              <Grid lists={a.lists} small />
            </div>
          ))}
        </li>
      ))}
    </ul>
  );
}

export function BlocklistsView({ data }: { data: BlocklistsResult }) {
  const verdict = blocklistsVerdict(data);
  return (
    <>
      <div class={`tls-verdict bl-verdict tone-${verdict.tone}`} data-listed={data.listed_count}>
        <p class="tls-result">
          <Badge tone={verdict.tone}>{verdict.label}</Badge>
        </p>
        <p class="bl-summary">{verdict.text}</p>
      </div>
      <Section
        title={`${data.subject.kind === 'domain' ? 'Domain lists' : 'Lists'} (${data.lists.length}${data.lists.length ? `: ${countsText(data.lists)}` : ''})`}
      >
        {data.lists.length ? <Grid lists={data.lists} /> : <Note>No enabled list of this kind.</Note>}
      </Section>
      {data.mx && (
        <Section title="MX hosts">
          <Mx mx={data.mx} />
        </Section>
      )}
      <Note>
        Checked {formatDateTime(data.checked_at)}. Refused, unanswered and broken lists are not counted: only
        a listing by a list that answered is.
      </Note>
    </>
  );
}
