/**
 * A target that gave no handshake is an answer (issue 31 §2): the CLI says what happened
 * and at which stage, where it drew the certificate card, as the site does.
 */
import { describe, expect, it } from 'vitest';
import { tls } from '../../../../src/cli/render/tls.js';
import { createStyle } from '../../../../src/cli/style.js';
import type { TlsResponse } from '../../../../src/features/tls/tls.schema.js';

const ESC = String.fromCharCode(27);

describe('netdiag tls, a target that refused', () => {
  const body: TlsResponse = {
    tls: {
      status: 'error',
      error: 'TLS handshake with refused.example:443 failed at the connect stage (refused): ECONNREFUSED',
      stage: 'connect',
    },
  };

  it('prints the error and its stage, plain without colour', () => {
    const out = tls(body, createStyle(false)).join('\n');
    expect(out).toContain('failed at the connect stage (refused)');
    expect(out).toContain('(at connect)');
    expect(out).not.toContain('\u001b[');
  });

  it('marks it as a failure in colour', () => {
    const out = tls(body, createStyle(true)).join('\n');
    expect(out).toMatch(new RegExp(`${ESC}\\[[0-9;]*m.*ECONNREFUSED`));
  });
});
