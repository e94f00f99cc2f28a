/**
 * Worker-thread entry of the FIT decoder pool (fit-decoder.pool.ts). It is
 * loaded by Node itself, not by a bundler: it imports only Node built-ins,
 * @garmin/fitsdk, saxes and relative `.ts` files with erasable syntax, so it runs
 * as built (server/dist, `npm start`) and from source under Node's type
 * stripping (vitest).
 */
import { parentPort } from 'node:worker_threads';
import { decodeActivityFile, decodeActivityStreams } from './activity-file.ts';
import type { DecodeReply, DecodeTask } from './fit-decoder.pool.ts';

const port = parentPort;
if (!port) throw new Error('fit-decode.worker.ts runs only as a worker thread');

port.on('message', (task: DecodeTask) => {
  let reply: DecodeReply;
  try {
    const outcome =
      task.kind === 'streams'
        ? decodeActivityStreams(task.bytes, task.options)
        : decodeActivityFile(task.bytes, task.options, task.accept);
    reply = { id: task.id, outcome };
  } catch (error) {
    // A bug in our summary code, not a bad file: the pool turns it into a 500.
    reply = { id: task.id, failure: error instanceof Error ? (error.stack ?? error.message) : String(error) };
  }
  // The bytes are this worker's own copy (the pool moved it here): free them now rather than at a
  // later full collection of this isolate. Nothing in the reply refers to them.
  const { buffer } = task.bytes;
  if (buffer instanceof ArrayBuffer) buffer.transfer(0);
  port.postMessage(reply);
});
