/**
 * The scan's letter grade, SSL Labs-like but netdiag's own, computed from the findings and the
 * answer only (docs/tls-scan.md, "Grade"): F for what is broken, T for no trusted certificate,
 * then caps E, D, C, B, and A+ for a configuration with nothing left to tighten.
 */
import type { TlsScan, TlsScanFinding } from '../features/tls-scan/tls-scan.schema.js';
import { hasForwardSecrecy, isAead, offeredProtocols, type ScanFacts } from './facts.js';
import type { FindingCode } from './scan-findings.js';

export type ScanGrade = TlsScan['grade'];

export interface GradeExplanation {
  grade: ScanGrade;
  /** The rules that set or capped the grade, worst first; empty for A+. */
  reasons: string[];
}

/** Caps by finding code: the grade can be no better than this while the finding stands. */
const CAPS: readonly (readonly [Exclude<ScanGrade, 'T' | 'A+' | 'A'>, readonly FindingCode[]])[] = [
  [
    'F',
    ['sslv2_offered', 'sslv3_offered', 'export_suites', 'null_suites', 'anonymous_suites', 'ocsp_revoked'],
  ],
  ['E', ['weak_encryption_suites']],
  ['C', ['tls10_offered', 'tls11_offered', 'rc4_suites', 'compression', 'no_secure_renegotiation']],
  // A rejected certificate beside a trusted one: clients that pick its key type fail.
  [
    'B',
    [
      '3des_suites',
      'no_forward_secrecy_suites',
      'ocsp_invalid',
      'certificate_expired',
      'certificate_untrusted',
    ],
  ],
];

export function explainGrade(facts: ScanFacts, findings: readonly TlsScanFinding[]): GradeExplanation {
  const codes = new Set(findings.map((f) => f.code));
  const reasons: { grade: ScanGrade; why: string }[] = [];
  for (const [grade, capCodes] of CAPS) {
    for (const code of capCodes) if (codes.has(code)) reasons.push({ grade, why: code });
  }
  for (const f of findings.filter((x) => x.code === 'dhe_weak')) {
    reasons.push({
      grade: f.severity === 'high' ? 'F' : 'B',
      why: `dhe_weak (${facts.dhe?.bits ?? '?'} bits)`,
    });
  }
  const offered = offeredProtocols(facts);
  if (offered.length > 0 && !offered.includes('TLSv1.2') && !offered.includes('TLSv1.3')) {
    reasons.push({ grade: 'D', why: 'neither TLS 1.2 nor TLS 1.3 offered' });
  }
  const suites = facts.cipher_suites;
  if (suites.length > 0 && !suites.some((s) => hasForwardSecrecy(s.key_exchange))) {
    reasons.push({ grade: 'C', why: 'no suite with forward secrecy' });
  }
  if (suites.length > 0 && !suites.some(isAead)) reasons.push({ grade: 'B', why: 'no AEAD suite' });

  const ORDER: readonly ScanGrade[] = ['F', 'T', 'E', 'D', 'C', 'B', 'A', 'A+'];
  reasons.sort((a, b) => ORDER.indexOf(a.grade) - ORDER.indexOf(b.grade));
  const worst = reasons[0]?.grade;
  const lines = reasons.map((r) => `${r.grade}: ${r.why}`);

  if (worst === 'F') return { grade: 'F', reasons: lines };
  // T outranks every cap but F: without a trusted certificate the rest protects nobody.
  if (!facts.certificates.some((c) => c.verdict.status !== 'rejected')) {
    return { grade: 'T', reasons: ['T: no certificate served is trusted', ...lines] };
  }
  if (worst) return { grade: worst, reasons: lines };

  const plusMissing = [
    ...(offered.includes('TLSv1.3') ? [] : ['TLS 1.3 not offered']),
    ...(suites.every((s) => isAead(s) && hasForwardSecrecy(s.key_exchange))
      ? []
      : ['a suite without AEAD or forward secrecy']),
    ...(findings.some((f) => f.severity !== 'info') ? ['findings above info'] : []),
    ...(facts.certificates.every((c) => c.verdict.status === 'trusted')
      ? []
      : ['a certificate trusted with warnings']),
  ];
  if (plusMissing.length > 0) return { grade: 'A', reasons: plusMissing.map((m) => `A (not A+): ${m}`) };
  return { grade: 'A+', reasons: [] };
}

export function scanGrade(facts: ScanFacts, findings: readonly TlsScanFinding[]): ScanGrade {
  return explainGrade(facts, findings).grade;
}
