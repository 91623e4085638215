/**
 * The judging of a scan, in one place for the service: findings, grade,
 * ratings and NCSC-NL classes. PLACEHOLDER until the rules land (issue 33).
 */
import type { CipherSuite, TlsProtocol } from '../../tls-scan/cipher-suites.js';
import type { NcscClass, Ratings, ScanGroupName, TlsScan, TlsScanFinding } from './tls-scan.schema.js';

export type ScanFacts = Omit<TlsScan, 'findings' | 'grade' | 'ratings'>;

export const ncscSuiteClass = (_suite: CipherSuite, _protocol: TlsProtocol): NcscClass => 'good';
export const ncscGroupClass = (_name: ScanGroupName): NcscClass => 'good';
export const ncscDheClass = (_bits: number): NcscClass => 'good';
export const scanFindings = (_facts: ScanFacts): TlsScanFinding[] => [];
export const scanGrade = (_facts: ScanFacts, _findings: TlsScanFinding[]): TlsScan['grade'] => 'A';
export const rateMozilla = (_facts: ScanFacts): Ratings['mozilla'] => ({
  version: '0',
  meets: null,
  gaps: [],
});
export const rateNcsc = (_facts: ScanFacts): Ratings['ncsc'] => ({
  version: '0',
  overall: 'good',
  protocols: [],
  reasons: [],
});
