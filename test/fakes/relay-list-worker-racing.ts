/**
 * The relay-list worker (src/providers/ip/relay-list-worker.ts), except that
 * the first index file it names is removed just before the main thread hears
 * of it: what another process's clean-up does when it runs between the
 * worker's answer and the main thread opening the file.
 */
import { unlinkSync } from 'node:fs';
import { parentPort } from 'node:worker_threads';
import type { ParseReply } from '../../src/providers/ip/relay-list-worker.js';

const port = parentPort;
if (port) {
  const post = port.postMessage.bind(port);
  let removed = false;
  port.postMessage = (reply: ParseReply, transfer?: Parameters<typeof post>[1]) => {
    if (!removed && reply.ok && 'path' in reply) {
      unlinkSync(reply.path);
      removed = true;
    }
    post(reply, transfer);
  };
  // After the patch: the worker answers as soon as it is evaluated.
  await import('../../src/providers/ip/relay-list-worker.js');
}
