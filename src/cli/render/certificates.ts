import type { CertificatesResponse, IssuanceBody } from '../../features/ct/ct.schema.js';
import { table } from '../table.js';
import { badge, capped, formatDate, plural, type Renderer } from './common.js';

/** As many rows as the site shows before its "Show all" button. */
const ROWS_SHOWN = 50;

function names(i: IssuanceBody): string {
  const all = i.dns_names.length ? i.dns_names : i.common_name ? [i.common_name] : [];
  if (all.length <= 3) return all.join(', ');
  return `${all.slice(0, 3).join(', ')} +${all.length - 3} more`;
}

export const certificates: Renderer = (body, style) => {
  const data = body as CertificatesResponse;
  const valid = data.issuances.filter((i) => !i.expired && !i.revoked).length;
  const lines = [
    `${style.bold(plural(data.total, 'issuance'))} for ${data.domain} and its subdomains  ` +
      `${badge(style, valid > 0 ? 'ok' : 'muted', `${valid} currently valid`)}` +
      `${data.truncated ? `  ${badge(style, 'warn', 'incomplete')}` : ''}`,
  ];
  if (data.issuances.length === 0) {
    lines.push('No certificate has been logged for this name.');
  } else {
    const { shown, note } = capped(data.issuances, ROWS_SHOWN);
    lines.push(
      '',
      ...table(
        style,
        ['ISSUED', 'EXPIRES', 'STATE', 'ISSUER', 'NAMES'],
        shown.map((i) => [
          formatDate(i.not_before),
          formatDate(i.not_after),
          i.revoked
            ? badge(style, 'bad', 'revoked')
            : i.expired
              ? badge(style, 'muted', 'expired')
              : badge(style, 'ok', 'valid'),
          i.issuer.organization ?? i.issuer.name,
          names(i),
        ]),
      ),
      ...note,
    );
  }
  lines.push(
    '',
    style.dim(
      'An issuance record shows a certificate was logged; it does not prove that the certificate is served now.' +
        data.gaps.map((gap) => ` ${gap.detail}`).join(''),
    ),
  );
  return lines;
};
