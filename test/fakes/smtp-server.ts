/**
 * A fake mail server for STARTTLS probes: the SMTP a probe speaks (RFC 5321
 * banner, EHLO with multi-line 250, STARTTLS per RFC 3207 upgrading the same
 * socket with a test-CA certificate, EHLO again, QUIT) and the faults mail
 * servers show in the world.
 *
 *   const mx = await startFakeSmtpServer({ cert: await pki.issue({ dnsNames: ['mx.mail.test'] }) });
 *   mx.port; mx.sessions; mx.set({ fault: 'no-starttls' }); await mx.close();
 *
 * Faults: `no-starttls` (EHLO without it), `banner-421` / `banner-554`
 * (refuses service in the greeting), `stall` (accepts, never greets),
 * `garbage` (a greeting that is not SMTP), `starttls-454` (offers it, then
 * refuses), `inject` (bytes after the 220 to STARTTLS), `handshake-fail`
 * (220, then closes instead of TLS).
 */
import { type AddressInfo, createServer, type Server, type Socket } from 'node:net';
import { TLSSocket } from 'node:tls';
import type { IssuedCert } from './test-ca.js';

export type SmtpFault =
  | 'no-starttls'
  | 'banner-421'
  | 'banner-554'
  | 'stall'
  | 'garbage'
  | 'starttls-454'
  | 'inject'
  | 'handshake-fail';

export interface FakeSmtpSession {
  /** Commands received, in order, as sent (without CRLF); TLS ones after "STARTTLS". */
  commands: string[];
  /** SNI the client sent in its ClientHello. */
  servername?: string;
  tls: boolean;
}

export interface FakeSmtpServer {
  host: string;
  port: number;
  sessions: FakeSmtpSession[];
  set(behaviour: { fault?: SmtpFault; chain?: IssuedCert }): void;
  close(): Promise<void>;
}

export interface FakeSmtpOptions {
  /** The certificate served after STARTTLS (`certPem` may hold the chain). */
  cert: IssuedCert;
  /** Default 127.0.0.1 on an ephemeral port. */
  host?: string;
  port?: number;
  hostname?: string;
}

export async function startFakeSmtpServer(opts: FakeSmtpOptions): Promise<FakeSmtpServer> {
  const name = opts.hostname ?? 'mx.fake.test';
  let fault: SmtpFault | undefined;
  let cert = opts.cert;
  const sessions: FakeSmtpSession[] = [];
  const sockets = new Set<Socket>();

  const serve = (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    const session: FakeSmtpSession = { commands: [], tls: false };
    sessions.push(session);
    if (fault === 'stall') return;
    if (fault === 'garbage') return void socket.end('HTTP/1.1 400 Bad Request\r\n\r\n');
    if (fault === 'banner-421') return void socket.end(`421 4.3.2 ${name} Service not available\r\n`);
    if (fault === 'banner-554')
      return void socket.end(`554-${name} no SMTP service here\r\n554 5.3.2 go away\r\n`);
    socket.write(`220 ${name} ESMTP fake\r\n`);
    converse(socket, session, false);
  };

  const converse = (stream: Socket | TLSSocket, session: FakeSmtpSession, secure: boolean) => {
    let buffer = '';
    const onData = (chunk: Buffer) => {
      buffer += chunk.toString('latin1');
      let end = buffer.indexOf('\r\n');
      while (end >= 0) {
        const line = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        session.commands.push(line);
        const verb = line.split(' ')[0]!.toUpperCase();
        if (verb === 'EHLO') {
          const starttls = !secure && fault !== 'no-starttls';
          stream.write(
            `250-${name} greets ${line.slice(5)}\r\n250-PIPELINING\r\n250-SIZE 52428800\r\n` +
              (starttls ? '250-STARTTLS\r\n' : '') +
              '250 8BITMIME\r\n',
          );
        } else if (verb === 'STARTTLS' && !secure) {
          if (fault === 'starttls-454') {
            stream.write('454 4.7.0 TLS not available due to local problem\r\n');
          } else if (fault === 'handshake-fail') {
            stream.end('220 2.0.0 Ready to start TLS\r\n');
          } else {
            stream.write(`220 2.0.0 Ready to start TLS\r\n${fault === 'inject' ? '250 injected\r\n' : ''}`);
            stream.off('data', onData);
            upgrade(stream as Socket, session);
            return;
          }
        } else if (verb === 'QUIT') {
          stream.end('221 2.0.0 Bye\r\n');
          return;
        } else {
          stream.write('502 5.5.2 Command not recognized\r\n');
        }
        end = buffer.indexOf('\r\n');
      }
    };
    stream.on('data', onData);
  };

  const upgrade = (socket: Socket, session: FakeSmtpSession) => {
    const tls = new TLSSocket(socket, {
      isServer: true,
      key: cert.keyPem,
      cert: cert.certPem,
      SNICallback: (servername, cb) => {
        session.servername = servername;
        cb(null);
      },
    });
    tls.on('error', () => undefined);
    tls.once('secure', () => {
      session.tls = true;
      session.commands.push('(tls)');
    });
    converse(tls, session, true);
  };

  const server: Server = createServer(serve);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => resolve());
  });
  const address = server.address() as AddressInfo;
  return {
    host: address.address,
    port: address.port,
    sessions,
    set(b) {
      fault = b.fault;
      if (b.chain) cert = b.chain;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
