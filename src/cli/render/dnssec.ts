/**
 * The site's DNSSEC view (src/web/results/dnssec.tsx) on a terminal: the verdict, then the chain
 * of trust as an indented tree, zone by zone from the trust anchor down. Under each zone its DS
 * records, under each DS the key it names, under each key its signature over the key set with
 * its window; the link that holds in green, the first broken one in red with its reason code,
 * where the chain of trust has ended in grey. Which link broke, and the words, are the client's
 * (client/verdicts.ts dnssecChain), as on the page.
 */
import {
  type ChainMark,
  type DnssecZoneView,
  dnssecAnswer,
  dnssecChain,
  dnssecVerdict,
  type SignatureView,
} from '../../client/verdicts.js';
import {
  DENIAL_STATUS,
  DNSSEC_FINDING_TONE,
  DNSSEC_STATUS,
  dnskeyText,
  dsDigestName,
  windowText,
  zoneText,
} from '../../client/words.js';
import type { DnssecResponse } from '../../features/dnssec/dnssec.schema.js';
import type { Style } from '../style.js';
import { section, table } from '../table.js';
import { badge, formatDateTime, formatSeconds, headline, plural, type Renderer } from './common.js';

type Key = DnssecZoneView['link']['dnskeys'][number];
type Finding = DnssecResponse['findings'][number];

const STEP = '  ';

function mark(style: Style, m: ChainMark): string {
  return style.tone(m.tone, m.broken ? style.bold(`✕ ${m.text}`) : m.text);
}

function signature(style: Style, v: SignatureView, label: string, indent: string): string {
  const s = v.signature;
  const head = `${label} ${s.key_tag}`;
  const state = badge(style, v.broken ? 'bad' : v.window.tone, v.window.text);
  return `${indent}${v.broken ? style.tone('bad', style.bold(`✕ ${head}`)) : head}${style.dim(` of ${zoneText(s.signer)}`)}  ${windowText(s)}  ${state}`;
}

function keyLine(style: Style, k: Key, indent: string): string {
  const notes = [
    k.matched_by_ds ? badge(style, 'ok', 'named by the DS') : '',
    k.signs_keyset ? badge(style, 'ok', 'signed the key set') : '',
    k.revoked ? badge(style, 'bad', 'revoked') : '',
    k.supported ? '' : badge(style, 'muted', 'algorithm not supported'),
  ].filter(Boolean);
  return `${indent}${style.bold(`${k.role} ${k.key_tag}`)}  ${style.dim(dnskeyText(k))}${notes.length ? `  ${notes.join(' · ')}` : ''}`;
}

function findingLines(style: Style, findings: readonly Finding[], indent = ''): string[] {
  return findings.map(
    (f) => `${indent}${badge(style, DNSSEC_FINDING_TONE[f.severity], f.severity)} ${f.message}`,
  );
}

/** A key, then the signatures over the key set made with it. */
function keyBranch(style: Style, z: DnssecZoneView, k: Key, indent: string): string[] {
  return [
    keyLine(style, k, indent),
    ...z.keysetSignatures
      .filter((v) => v.signature.key_tag === k.key_tag)
      .map((v) => signature(style, v, 'RRSIG DNSKEY by key', indent + STEP)),
  ];
}

/** One zone of the chain: its heading, the link from its parent, then DS → key → signature as a tree. */
function zoneLines(style: Style, z: DnssecZoneView): string[] {
  const { link } = z;
  const paint = (text: string) => (z.tone === 'muted' ? style.dim(text) : text);
  const lines = [
    `${STEP}${z.entry.broken ? mark(style, z.entry) : style.tone(z.entry.tone, `↓ ${z.entry.text}`)}`,
    `${style.bold(paint(zoneText(link.zone)))}  ${badge(style, z.tone, DNSSEC_STATUS[link.status].label)}${link.anchored ? `  ${badge(style, 'info', 'trust anchor')}` : ''}`,
  ];
  const said = z.broken?.reason ?? (link.status === 'secure' ? null : link.reason);
  if (said) {
    lines.push(
      z.broken
        ? `${STEP}${style.tone('bad', style.bold(`✕ ${said.code}`))}${style.tone('bad', `: ${said.detail}`)}`
        : `${STEP}${style.dim(`${said.code}: ${said.detail}`)}`,
    );
  }
  lines.push(...z.dsSignatures.map((v) => signature(style, v, 'DS signed by key', STEP)));
  const shown = new Set<number>();
  for (const { record: d, mark: m } of z.ds) {
    lines.push(
      `${STEP}DS ${style.bold(String(d.key_tag))}  ${style.dim(`${d.algorithm_name} · ${dsDigestName(d.digest_type)}`)}  → ${mark(style, m)}`,
    );
    const key = link.dnskeys.find((k) => k.key_tag === d.key_tag && d.matches_key);
    if (key && !shown.has(key.key_tag)) {
      shown.add(key.key_tag);
      lines.push(...keyBranch(style, z, key, STEP.repeat(2)));
    }
  }
  // The keys no DS names (the zone-signing keys), each with the signatures it made.
  for (const k of link.dnskeys.filter((k) => !shown.has(k.key_tag)))
    lines.push(...keyBranch(style, z, k, STEP));
  const tags = new Set(link.dnskeys.map((k) => k.key_tag));
  lines.push(
    ...z.keysetSignatures
      .filter((v) => !tags.has(v.signature.key_tag))
      .map((v) => signature(style, v, 'RRSIG DNSKEY by unserved key', STEP)),
  );
  // A broken key set whose signatures are all in their window (or missing): say it at the keys.
  if (z.keysToSignatures?.broken && !z.keysetSignatures.some((v) => v.broken))
    lines.push(`${STEP}${mark(style, z.keysToSignatures)}`);
  lines.push(...findingLines(style, link.findings, STEP));
  return lines;
}

function answerLines(style: Style, data: DnssecResponse): string[] {
  const view = dnssecAnswer(data);
  const { answer } = data;
  const denial = answer.denial;
  const rcodeTone = answer.rcode === 'NOERROR' ? 'ok' : answer.rcode === 'NXDOMAIN' ? 'warn' : 'bad';
  return [
    `${badge(style, rcodeTone, answer.rcode)}  ${style.dim(plural(answer.records.length, 'record'))}`,
    ...(view.broken
      ? [
          `${style.tone('bad', style.bold(`✕ ${view.broken.code}`))}${style.tone('bad', `: ${view.broken.detail}`)}`,
        ]
      : []),
    ...(answer.records.length
      ? table(
          style,
          ['NAME', 'TYPE', 'TTL', 'DATA'],
          answer.records.map((r) => {
            const quiet = (text: string) => (r.type === data.type ? text : style.dim(text));
            return [quiet(r.name), quiet(r.type), quiet(formatSeconds(r.ttl)), quiet(r.data)];
          }),
        )
      : []),
    ...view.signatures.map((v) => signature(style, v, `RRSIG ${v.signature.covers} by key`, '')),
    ...(denial
      ? [
          `Denial of existence: ${badge(style, DENIAL_STATUS[denial.status].tone, DENIAL_STATUS[denial.status].label)}${denial.kind ? style.dim(` ${denial.kind.replaceAll('_', ' ')}`) : ''}`,
          ...denial.records.map((r) => `${STEP}${r.name} ${r.type} ${r.data}`),
        ]
      : []),
  ];
}

export const dnssec: Renderer = (body, style) => {
  const data = body as DnssecResponse;
  const verdict = dnssecVerdict(data);
  return [
    `${headline(style, verdict.tone, DNSSEC_STATUS[data.status].label)}  ${verdict.text}`,
    ...section(
      style,
      'Chain of trust',
      dnssecChain(data).flatMap((z) => zoneLines(style, z)),
    ),
    ...section(style, `The answer: ${data.target} ${data.type}`, answerLines(style, data)),
    ...section(style, 'Findings', findingLines(style, data.findings)),
    '',
    style.dim(
      `Validated by netdiag itself, from the trust anchor down: ${plural(data.queries, 'upstream query', 'upstream queries')} · checked ${formatDateTime(data.checked_at)}.`,
    ),
  ];
};
