/**
 * A mail server's front for tests: the plaintext SMTP of RFC 5321 and RFC
 * 3207 (a 220 banner, EHLO listing STARTTLS, STARTTLS answered 220), after
 * which every byte is piped to a TLS server of the test's (an `openssl
 * s_server` profile), so the TLS that follows is OpenSSL's own. It counts the
 * commands each session sent, so a test can hold a client to "never MAIL,
 * never RCPT". Real Postfix is the interop job's (scripts/interop-smtp.sh).
 *
 *   const front = await startSmtpFront({ address: '127.0.212.2', port: 25, backend: { host: '127.0.212.2', port: 4433 } });
 */
import { connect, createServer, type Socket } from 'node:net';

export interface SmtpFront {
  address: string;
  port: number;
  /** Every command line received, upper-cased verb first, across all sessions. */
  commands: string[];
  sessions: number;
  close(): Promise<void>;
}

export interface SmtpFrontOptions {
  address: string;
  port: number;
  /** Where the bytes after STARTTLS go. */
  backend: { host: string; port: number };
  /** Leave STARTTLS out of the EHLO reply (a server without TLS). */
  noStarttls?: boolean;
}

export function startSmtpFront(opts: SmtpFrontOptions): Promise<SmtpFront> {
  const sockets = new Set<Socket>();
  const front: SmtpFront = {
    address: opts.address,
    port: opts.port,
    commands: [],
    sessions: 0,
    close: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
  const server = createServer((client) => {
    front.sessions += 1;
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => client.destroy());
    let buffer = '';
    const onData = (chunk: Buffer) => {
      buffer += chunk.toString('latin1');
      let end = buffer.indexOf('\r\n');
      while (end >= 0) {
        const line = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        front.commands.push(line.toUpperCase());
        const verb = line.split(' ')[0]!.toUpperCase();
        if (verb === 'EHLO') {
          client.write(
            `250-${opts.address} hello\r\n250-PIPELINING\r\n${opts.noStarttls ? '' : '250-STARTTLS\r\n'}250 8BITMIME\r\n`,
          );
        } else if (verb === 'STARTTLS' && !opts.noStarttls) {
          client.off('data', onData);
          client.write('220 2.0.0 Ready to start TLS\r\n');
          // From here the client speaks TLS: OpenSSL answers it.
          const upstream = connect(opts.backend.port, opts.backend.host);
          sockets.add(upstream);
          upstream.on('close', () => {
            sockets.delete(upstream);
            client.destroy();
          });
          upstream.on('error', () => client.destroy());
          client.on('close', () => upstream.destroy());
          client.pipe(upstream).pipe(client);
          return;
        } else if (verb === 'QUIT') {
          client.end('221 2.0.0 Bye\r\n');
        } else {
          client.write('502 5.5.2 Error: command not recognized\r\n');
        }
        end = buffer.indexOf('\r\n');
      }
    };
    client.on('data', onData);
    client.write(`220 ${opts.address} ESMTP netdiag test front\r\n`);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.address, () => {
      front.port = (server.address() as { port: number }).port;
      resolve(front);
    });
  });
}
