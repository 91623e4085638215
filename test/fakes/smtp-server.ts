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
 * (220, then closes instead of TLS), `stall-handshake` (220, then never
 * speaks TLS), `silent-after-tls` (completes TLS, then never answers),
 * `huge-replies` (a banner and EHLO replies of 199 lines of 4 000 octets each:
 * as much as a probe reads before it calls a reply garbage). With `relay`, the
 * bytes after STARTTLS go to another TLS server (the TLS scan's SMTP tests).
 *
 * A tarpit paces its replies besides: `replyDelayMs` holds each plaintext
 * reply (the banner included) that long, `trickleMs` sends it a byte at a time
 * at that interval (no idle timer ever fires). `mx.connections` counts the
 * connections open now and the most ever open at once.
 */
import { type AddressInfo, connect, createServer, type Server, type Socket } from 'node:net';
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
  | 'handshake-fail'
  | 'stall-handshake'
  | 'silent-after-tls'
  | 'huge-replies';

/** 199 continuation lines of 4 000 octets and the last one: a reply just under the probe's limits. */
const huge = (code: number, last: string) =>
  `${Array.from({ length: 199 }, (_, i) => `${code}-X${i}${'x'.repeat(3_995)}\r\n`).join('')}${code} ${last}\r\n`;

export interface SmtpBehaviour {
  fault?: SmtpFault;
  chain?: IssuedCert;
  replyDelayMs?: number;
  trickleMs?: number;
}

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
  /** Connections open now and the most open at once since the start (or `resetPeak()`). */
  connections: { readonly open: number; readonly peak: number; resetPeak(): void };
  set(behaviour: SmtpBehaviour): void;
  close(): Promise<void>;
}

export interface FakeSmtpOptions {
  /** The certificate served after STARTTLS (`certPem` may hold the chain). */
  cert: IssuedCert;
  /** Default 127.0.0.1 on an ephemeral port. */
  host?: string;
  port?: number;
  hostname?: string;
  /**
   * After the 220 to STARTTLS, pipe the connection to this TLS server instead of upgrading
   * in process: the TLS is then the relay's (an `openssl s_server` profile the TLS scan is
   * held to). `cert` is not used then.
   */
  relay?: { host: string; port: number };
}

export async function startFakeSmtpServer(opts: FakeSmtpOptions): Promise<FakeSmtpServer> {
  const name = opts.hostname ?? 'mx.fake.test';
  let fault: SmtpFault | undefined;
  let pace: Pick<SmtpBehaviour, 'replyDelayMs' | 'trickleMs'> = {};
  let cert = opts.cert;
  const sessions: FakeSmtpSession[] = [];
  const sockets = new Set<Socket>();
  let open = 0;
  let peak = 0;

  /**
   * Counts a connection open from its accept until the peer is gone. The count goes up one
   * turn late (setImmediate): a client that closes one session and opens the next has its
   * FIN queued before its SYN, and a poll that sees both would otherwise count the new one
   * before the old one's 'end' (emitted on the next tick), so a peak would read one too high.
   */
  const count = (socket: Socket): (() => void) => {
    let state: 'pending' | 'open' | 'gone' = 'pending';
    const gone = () => {
      if (state === 'open') open--;
      state = 'gone';
    };
    socket.once('end', gone);
    // A reset (the TLS scan ends each session with one) is an error, read in the same turn as
    // the RST; 'close' waits for the handle to be released, past the next connection's count.
    socket.once('error', gone);
    socket.once('close', gone);
    // Flowing, so the peer's FIN is read even where the fake reads nothing (`stall`).
    socket.resume();
    setImmediate(() => {
      if (state !== 'pending') return;
      state = 'open';
      peak = Math.max(peak, ++open);
    });
    return gone;
  };

  /** Writes a reply as the tarpit settings say: after a delay, a byte at a time, or at once. */
  const send = async (stream: Socket | TLSSocket, text: string): Promise<void> => {
    const { replyDelayMs, trickleMs } = pace;
    if (replyDelayMs) await sleep(replyDelayMs);
    if (!trickleMs) return void (stream.destroyed || stream.write(text));
    for (const byte of text) {
      if (stream.destroyed) return;
      stream.write(byte);
      await sleep(trickleMs);
    }
  };

  const serve = (socket: Socket) => {
    sockets.add(socket);
    const gone = count(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    const session: FakeSmtpSession = { commands: [], tls: false };
    sessions.push(session);
    if (fault === 'stall') return;
    if (fault === 'garbage') return void socket.end('HTTP/1.1 400 Bad Request\r\n\r\n');
    if (fault === 'banner-421') return void socket.end(`421 4.3.2 ${name} Service not available\r\n`);
    if (fault === 'banner-554')
      return void socket.end(`554-${name} no SMTP service here\r\n554 5.3.2 go away\r\n`);
    // Replies go out in order however they are paced; commands are read as they come.
    let replies = send(
      socket,
      fault === 'huge-replies' ? huge(220, `${name} ESMTP fake`) : `220 ${name} ESMTP fake\r\n`,
    );
    converse(socket, session, false, gone, (text, then) => {
      replies = replies.then(() => send(socket, text)).then(then);
    });
  };

  const converse = (
    stream: Socket | TLSSocket,
    session: FakeSmtpSession,
    secure: boolean,
    gone: () => void,
    reply: (text: string, then?: () => void) => void = (text, then) => {
      stream.write(text);
      then?.();
    },
  ) => {
    let buffer = '';
    const onData = (chunk: Buffer) => {
      buffer += chunk.toString('latin1');
      let end = buffer.indexOf('\r\n');
      while (end >= 0) {
        const line = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        session.commands.push(line);
        const verb = line.split(' ')[0]!.toUpperCase();
        if (secure && fault === 'silent-after-tls') {
          // Reads on, answers nothing: the client's deadline is all that ends the session.
        } else if (verb === 'EHLO' && fault === 'huge-replies') {
          reply(huge(250, secure ? '8BITMIME' : 'STARTTLS'));
        } else if (verb === 'EHLO') {
          const starttls = !secure && fault !== 'no-starttls';
          reply(
            `250-${name} greets ${line.slice(5)}\r\n250-PIPELINING\r\n250-SIZE 52428800\r\n` +
              (starttls ? '250-STARTTLS\r\n' : '') +
              '250 8BITMIME\r\n',
          );
        } else if (verb === 'STARTTLS' && !secure) {
          if (fault === 'starttls-454') {
            reply('454 4.7.0 TLS not available due to local problem\r\n');
          } else if (fault === 'handshake-fail') {
            reply('220 2.0.0 Ready to start TLS\r\n', () => stream.end());
          } else {
            // The client sends its ClientHello only once it has read the 220: nothing is lost meanwhile.
            stream.off('data', onData);
            reply(`220 2.0.0 Ready to start TLS\r\n${fault === 'inject' ? '250 injected\r\n' : ''}`, () => {
              if (fault === 'stall-handshake') stream.resume();
              else if (opts.relay) relay(stream as Socket, opts.relay);
              else upgrade(stream as Socket, session, gone);
            });
            return;
          }
        } else if (verb === 'QUIT') {
          reply('221 2.0.0 Bye\r\n', () => stream.end());
          return;
        } else {
          reply('502 5.5.2 Command not recognized\r\n');
        }
        end = buffer.indexOf('\r\n');
      }
    };
    stream.on('data', onData);
  };

  const relay = (socket: Socket, to: { host: string; port: number }) => {
    const upstream = connect(to.port, to.host);
    sockets.add(upstream);
    upstream.on('error', () => socket.destroy());
    upstream.once('close', () => {
      sockets.delete(upstream);
      socket.destroy();
    });
    socket.once('close', () => upstream.destroy());
    socket.pipe(upstream).pipe(socket);
  };

  const upgrade = (socket: Socket, session: FakeSmtpSession, gone: () => void) => {
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
    // The TLS socket takes the connection over: the peer's leaving shows on it.
    tls.once('end', gone);
    tls.once('close', gone);
    tls.once('secure', () => {
      session.tls = true;
      session.commands.push('(tls)');
    });
    converse(tls, session, true, gone);
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
    connections: {
      get open() {
        return open;
      },
      get peak() {
        return peak;
      },
      resetPeak() {
        peak = open;
      },
    },
    set(b) {
      fault = b.fault;
      pace = { replyDelayMs: b.replyDelayMs, trickleMs: b.trickleMs };
      if (b.chain) cert = b.chain;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
