/**
 * receivingHop: which Received header the receiving side wrote for the
 * connection from outside. The documentation ranges (192.0.2.0/24,
 * 2001:db8::/32) are not public addresses to src/net/address.ts, so the
 * outside clients here are well-known public service addresses.
 */
import { describe, expect, it } from 'vitest';
import { parseMessage } from '../../../src/message/headers.js';
import { receivedHops, receivingHop } from '../../../src/message/received.js';

function hopsOf(...received: string[]) {
  return receivedHops(parseMessage(`${received.map((r) => `Received: ${r}\r\n`).join('')}\r\nx`).fields);
}

const DATE = '; Tue, 2 Jan 2024 10:00:00 +0000';
const OUTSIDE = `from mail.sender.example (mail.sender.example [93.184.215.14]) by mx.example.net (Postfix) with ESMTPS id A1 (envelope-from <s@sender.example>)${DATE}`;
const SENDER_SUBMISSION = `from [10.1.2.3] (unknown [198.18.0.1]) by mail.sender.example (Postfix) with ESMTPSA id B2${DATE}`;

describe('receivingHop', () => {
  it('skips the receiving system’s loopback and private hops and takes the first public client', () => {
    const hops = hopsOf(
      `from localhost (localhost [127.0.0.1]) by mx.example.net (Postfix) with ESMTP id C3${DATE}`,
      `from mx.example.net ([10.0.0.2]) by filter.example.net (amavisd-new, port 10024) with ESMTP id D4${DATE}`,
      OUTSIDE,
      SENDER_SUBMISSION,
    );
    const r = receivingHop(hops);
    expect(r).toMatchObject({
      index: 2,
      ip: '93.184.215.14',
      helo: 'mail.sender.example',
      mail_from: 's@sender.example',
    });
    expect(r.why).toMatch(/Received header 2 .* topmost one naming a public client address/);
    expect(r.why).toMatch(/0 \(127\.0\.0\.1, loopback\); 1 \(10\.0\.0\.2, private-use\)/);
  });

  it('takes an IPv6 client', () => {
    const r = receivingHop(
      hopsOf(
        `from mail.sender.example (mail.sender.example [2606:4700:4700::1111]) by mx.example.net (Postfix) with ESMTPS id E5${DATE}`,
      ),
    );
    expect(r).toMatchObject({ index: 0, ip: '2606:4700:4700::1111' });
  });

  it('skips a hop without a client address (Gmail’s internal "by" hop)', () => {
    const hops = hopsOf(
      `by 2002:a05:6a10:a0d3:b0:5c4:5ac2:8ed6 with SMTP id x15csp1${DATE}`,
      `from mail.sender.example (mail.sender.example. [93.184.215.14]) by mx.google.com with ESMTPS id a1 for <r@gmail.example> (version=TLS1_3 cipher=TLS_AES_256_GCM_SHA384 bits=256/256)${DATE}`,
    );
    expect(receivingHop(hops)).toMatchObject({ index: 1, ip: '93.184.215.14', mail_from: null });
  });

  it('takes the provider’s own egress when the sender is on the same provider (Gmail to Gmail)', () => {
    const hops = hopsOf(
      `from mail-sor-f41.google.com (mail-sor-f41.google.com. [209.85.220.41]) by mx.google.com with SMTPS id a2${DATE}`,
      `by 2002:a05:6a10:a0d3:b0:5c4:5ac2:8ed6 with SMTP id x15csp2${DATE}`,
    );
    expect(receivingHop(hops)).toMatchObject({ index: 0, ip: '209.85.220.41' });
  });

  it('skips a public relay inside the receiving organization (reverse name and both ends there)', () => {
    const pub = hopsOf(
      `from mx1.example.net (mx1.example.net [1.0.0.1]) by imap.example.net (Postfix) with ESMTPS id F6${DATE}`,
      `from mail.sender.example (mail.sender.example [93.184.215.14]) by mx1.example.net (Postfix) with ESMTPS id G7${DATE}`,
    );
    const r = receivingHop(pub);
    expect(r).toMatchObject({ index: 1, ip: '93.184.215.14' });
    expect(r.why).toMatch(/0 \(from mx1\.example\.net \[1\.0\.0\.1\], a relay inside example\.net\)/);
  });

  it('does not take a sender’s HELO in the receiver’s domain for a relay when the receiver wrote no reverse name', () => {
    const hops = hopsOf(
      `from mx9.example.net (unknown [93.184.215.14]) by mx.example.net (Postfix) with ESMTP id H8${DATE}`,
      `from forged.example (forged.example [1.0.0.1]) by mail.example.net (Postfix) with ESMTP id I9${DATE}`,
    );
    expect(receivingHop(hops)).toMatchObject({ index: 0, ip: '93.184.215.14', helo: 'mx9.example.net' });
  });

  it('walks Microsoft 365’s internal hops (public IPv6, outlook.com and office365.com names) to the hop from outside', () => {
    const hops = hopsOf(
      `from SA1PR12MB5678.namprd12.prod.outlook.com (2603:10b6:806:22c::5) by CH3PR12MB1234.namprd12.prod.outlook.com with HTTPS${DATE}`,
      `from BN9PR03CA0123.namprd03.prod.outlook.com (2603:10b6:408:fe::8) by SA1PR12MB5678.namprd12.prod.outlook.com (2603:10b6:806:22c::5) with Microsoft SMTP Server (version=TLS1_2, cipher=TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384) id 15.20.7135.24${DATE}`,
      `from BN2PEPF000044A8.namprd04.prod.outlook.com (2603:10b6:408:fe:cafe::2) by BN9PR03CA0123.outlook.office365.com (2603:10b6:408:fe::8) with Microsoft SMTP Server (version=TLS1_2, cipher=TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384) id 15.20.7135.24 via Frontend Transport${DATE}`,
      `from mail.sender.example (93.184.215.14) by BN2PEPF000044A8.mail.protection.outlook.com (10.167.243.159) with Microsoft SMTP Server (version=TLS1_2, cipher=TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384) id 15.20.7135.24 via Frontend Transport${DATE}`,
      SENDER_SUBMISSION,
    );
    expect(receivingHop(hops)).toMatchObject({ index: 3, ip: '93.184.215.14', helo: 'mail.sender.example' });
  });

  it('takes Microsoft’s outbound pool as the sending side when both ends are Microsoft 365', () => {
    const hops = hopsOf(
      `from BN9PR03CA0123.namprd03.prod.outlook.com (2603:10b6:408:fe::8) by SA1PR12MB5678.namprd12.prod.outlook.com (2603:10b6:806:22c::5) with Microsoft SMTP Server id 15.20.7135.24${DATE}`,
      `from NAM12-DM6-obe.outbound.protection.outlook.com (40.107.243.100) by BN9PR03CA0123.mail.protection.outlook.com (10.167.243.159) with Microsoft SMTP Server (version=TLS1_2, cipher=TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384) id 15.20.7135.24 via Frontend Transport${DATE}`,
      `from DM6PR01MB1111.prod.outlook.com (2603:10b6:5:1c0::15) by DM6PR01MB2222.prod.outlook.com (2603:10b6:5:1c0::16) with Microsoft SMTP Server id 15.20.7135.24${DATE}`,
    );
    expect(receivingHop(hops)).toMatchObject({ index: 1, ip: '40.107.243.100' });
  });

  it('treats the caller’s own addresses as internal', () => {
    const hops = hopsOf(
      `from relay.example.org (relay.example.org [1.0.0.1]) by mx.example.net (Postfix) with ESMTP id J1${DATE}`,
      OUTSIDE,
    );
    expect(receivingHop(hops)).toMatchObject({ index: 0, ip: '1.0.0.1' });
    const r = receivingHop(hops, { internal: ['1.0.0.0/24'] });
    expect(r).toMatchObject({ index: 1, ip: '93.184.215.14' });
    expect(r.why).toMatch(/one of the receiving system's own addresses/);
  });

  it('takes the hop naming a given address, and says so when none does', () => {
    const hops = hopsOf(
      OUTSIDE,
      `from other.example (other.example [1.0.0.1]) by mail.sender.example with ESMTP id K2${DATE}`,
    );
    expect(receivingHop(hops, { ip: '1.0.0.1' })).toMatchObject({ index: 1, ip: '1.0.0.1' });
    const r = receivingHop(hops, { ip: '8.8.8.8' });
    expect(r).toMatchObject({ index: 0 });
    expect(r.why).toMatch(/^No Received header names the given address 8\.8\.8\.8\./);
  });

  it('finds none when no Received header names a public client', () => {
    const none = {
      index: null,
      ip: null,
      helo: null,
      mail_from: null,
      why: 'No Received header names a public client address.',
    };
    expect(
      receivingHop(hopsOf(SENDER_SUBMISSION, `from localhost (localhost [127.0.0.1]) by a.example${DATE}`)),
    ).toEqual(none);
    expect(receivingHop([])).toEqual(none);
    expect(receivingHop(hopsOf(`from a.example (a.example [192.0.2.1]) by b.example${DATE}`))).toEqual(none);
  });
});
