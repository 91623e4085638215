/**
 * POST /api/message: one message judged (docs/message.md). The pieces are
 * src/message/'s (headers, Received, Authentication-Results, DKIM and ARC on
 * mailauth) and the SPF and DMARC engines the other endpoints use; every DNS
 * question goes through one DnsLog on the configured resolvers.
 *
 * Privacy: the message is a local value of this call. Nothing here logs it,
 * puts it in the cache or keeps it past the answer, and the answer is never
 * cached (the route does not call answer()).
 */
import type { AppContext } from '../../context.js';
import { authenticateMessage, type KeyResolver } from '../../message/authenticate.js';
import { disagreements, trustAuthenticationResults } from '../../message/authentication-results.js';
import { fieldsNamed, headerFrom, parseMessage } from '../../message/headers.js';
import { receivedHops, receivingHop } from '../../message/received.js';
import type { DnssecDeps } from '../dnssec/dnssec.service.js';
import { dnssecValidator, RequestVerdicts } from '../dnssec/verdicts.js';
import { evaluateDmarc } from '../email/dmarc.js';
import { createMailDns, type TrackedMailDns } from '../email/mail-dns.js';
import { checkSpf, parseSpfInput } from '../spf/spf.service.js';
import { dmarcVerdict } from './dmarc-verdict.js';
import { DnsLog } from './dns-log.js';
import { messageFindings, messageVerdict } from './findings.js';
import type { MessageAnalysis } from './message.schema.js';

export interface Envelope {
  ip?: string;
  helo?: string;
  mail_from?: string;
}

export type MessageDeps = Pick<AppContext, 'dns' | 'clock'> & DnssecDeps & { receiver: string };

export function messageDeps(ctx: AppContext): MessageDeps {
  return { ...ctx, receiver: ctx.config.smtpHeloName };
}

export async function analyzeMessage(
  deps: MessageDeps,
  raw: Buffer,
  given: Envelope,
): Promise<MessageAnalysis> {
  const now = new Date(deps.clock());
  const parsed = parseMessage(raw);
  const headersOnly = parsed.body === null;
  const log = new DnsLog(deps.dns);
  const dnssec = dnssecValidator(deps);
  const dns = createMailDns(log.resolver, { verdicts: new RequestVerdicts(dnssec) });
  const notes: string[] = [];

  const auth = await authenticateMessage(parsed.normalized, {
    resolver: keyResolver(dns),
    now,
    headersOnly,
  });
  notes.push(...auth.notes);

  const hops = receivedHops(parsed.fields);
  const receiving = receivingHop(hops, given.ip !== undefined ? { ip: given.ip } : {});
  const envelope = envelopeOf(given, receiving, parsed.fields);
  const sender = headerFrom(parsed.fields);
  const from = { address: sender.address, domain: sender.domain };
  notes.push(...parsed.notes, ...sender.notes);

  const spf = envelope.ip
    ? await checkSpf(
        { dns: log.resolver, clock: deps.clock, receiver: deps.receiver, dnssec },
        parseSpfInput({
          ip: envelope.ip,
          ...(envelope.mail_from !== null ? { sender: envelope.mail_from } : {}),
          ...(envelope.helo !== null ? { helo: envelope.helo } : {}),
        }),
      )
    : null;

  const evaluation = from.domain ? await evaluateDmarc(from.domain, dns) : null;
  const { dmarc, dkimAligned } = dmarcVerdict({
    fromDomain: from.domain,
    evaluation,
    spf: spf ? { result: spf.result, domain: spf.domain } : null,
    dkim: auth.dkim.map((s) => ({ domain: s.domain, result: s.result })),
  });
  const dkim = auth.dkim.map((s, i) => ({
    ...s,
    aligned: s.domain === null || !from.domain ? null : dkimAligned[i]!,
  }));

  const ours = {
    dkim: dkim.map((s) => ({ domain: s.domain, selector: s.selector, result: s.result, reason: s.reason })),
    spf: spf?.result ?? null,
    dmarc: dmarc.result,
    arc: auth.arc.result,
  };
  const authenticationResults = trustAuthenticationResults(parsed.fields, receiving?.index ?? null).map(
    (header) => ({
      ...header,
      disagreements: header.trusted ? disagreements(header, ours) : [],
    }),
  );
  if (log.exhausted)
    notes.push('The DNS lookup budget of this analysis was spent: verdicts that needed more are temperror.');

  const partial = {
    headers_only: headersOnly,
    from,
    envelope,
    dkim,
    arc: auth.arc,
    spf,
    dmarc,
    received: hops,
    authentication_results: authenticationResults,
  };
  const findings = messageFindings(partial);
  const stats = dns.stats();
  return {
    verdict: messageVerdict(partial),
    ...partial,
    findings,
    notes,
    dns_lookups: log.lookups,
    analyzed_at: now.toISOString(),
    ...dns.attribution(),
    ...(stats.providersTried.length > 0 ? { providers_tried: stats.providersTried } : {}),
  };
}

/** DKIM and ARC keys through the analysis's one DNS path, in the shape mailauth asks (node:dns's). */
function keyResolver(dns: TrackedMailDns): KeyResolver {
  return async (name) => {
    const outcome = await dns.txt(name);
    const fail = (code: string, message: string) => Object.assign(new Error(message), { code });
    // node:dns's codes, which mailauth reads: no record is a permanent answer, anything else temporary.
    if (outcome.kind !== 'answer') throw fail('ESERVFAIL', `${name}: ${outcome.message}`);
    if (outcome.rcode === 'NXDOMAIN') throw fail('ENOTFOUND', `${name}: no such name`);
    if (outcome.records.length === 0) throw fail('ENODATA', `${name}: no TXT record`);
    // One string per record: MailDns joined the record's character-strings (RFC 6376 §3.6.2.2).
    return outcome.records.map((record) => [record]);
  };
}

/**
 * Who connected to the receiving server: what the request said, else the Received header the
 * receiving side wrote (src/message/received.ts chooses it and says why), MAIL FROM from its
 * envelope-from or the Return-Path.
 */
function envelopeOf(
  given: Envelope,
  receiving: ReturnType<typeof receivingHop>,
  fields: ReturnType<typeof parseMessage>['fields'],
): MessageAnalysis['envelope'] {
  const returnPath =
    fieldsNamed(fields, 'return-path')[0]
      ?.value.trim()
      .replace(/^<(.*)>$/, '$1') ?? null;
  if (given.ip !== undefined) {
    return {
      ip: given.ip,
      helo: given.helo ?? null,
      mail_from: given.mail_from ?? receiving?.mail_from ?? returnPath,
      source: 'given',
      received_index: null,
      why: 'The request named the connecting address.',
    };
  }
  if (receiving.index !== null) {
    return {
      ip: receiving.ip,
      helo: given.helo ?? receiving.helo,
      mail_from: given.mail_from ?? receiving.mail_from ?? returnPath,
      source: 'received',
      received_index: receiving.index,
      why: receiving.why,
    };
  }
  return {
    ip: null,
    helo: given.helo ?? null,
    mail_from: given.mail_from ?? returnPath,
    source: 'none',
    received_index: null,
    why: 'No address was given and no Received header names a public client address: SPF is not checked.',
  };
}
