import { contract } from '@pacer/contract';
import { initServer } from '@ts-rest/express';
import type { Config } from '../../config.ts';
import type { Logger } from '../../logger.ts';
import type { PgBoss } from 'pg-boss';
import type { Db } from '../../db/database.ts';
import type { ReadRouter } from '../../db/read-replica.ts';
import { readDbOf } from '../read-routing.ts';
import { actorOf } from '../bearer-auth.ts';
import { writeDepsOf } from '../idempotency.middleware.ts';
import type { FitDecodeQueue } from '../../modules/workouts/fit-decode-queue.ts';
import type { AcceptedFormats } from '../../modules/workouts/activity-file.ts';
import { parseFitUpload } from '../fit-upload.middleware.ts';
import {
  getWorkout,
  getWorkoutFile,
  getWorkoutStreams,
  listWorkoutPage,
  removeWorkout,
  uploadWorkoutFile,
  type FitUpload,
} from '../../modules/workouts/workouts.service.ts';

const s = initServer();

/** RFC 6266 §4.3: an ASCII `filename` for old clients, the exact name in `filename*` (RFC 8187). */
function contentDisposition(fileName: string): string {
  const ascii = fileName.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(fileName)}`;
}

function uploadOf(res: { locals: Express.Locals }): FitUpload {
  const upload = res.locals.fitUpload;
  if (!upload) throw new Error('an upload reached its handler without the multipart middleware');
  return upload;
}

export function workoutRoutes(deps: {
  readonly db: Db;
  readonly reads: ReadRouter;
  readonly boss: PgBoss;
  readonly config: Config;
  readonly logger: Logger;
  readonly decoding: FitDecodeQueue;
}) {
  const services = { db: deps.db, boss: deps.boss, decoding: deps.decoding };
  // Multipart bodies are streamed here, not by the JSON body parser (docs/design.md §5).
  const multipart = parseFitUpload({
    maxBytes: deps.config.maxUploadBytes,
    decoding: deps.decoding,
    logger: deps.logger,
  });
  const upload = async (res: Parameters<typeof actorOf>[0], accept: AcceptedFormats) => {
    const file = uploadOf(res);
    try {
      const result = await uploadWorkoutFile(writeDepsOf(res, services), actorOf(res), file, accept);
      return { status: result.created ? (201 as const) : (200 as const), body: result.workout };
    } finally {
      // The file is done with: free its place before the answer goes out, so the user's next upload
      // (sent as soon as this answer arrives) finds it free. The middleware releases it too, on close.
      file.ticket.release();
      // Stored (the insert has sent its copy) or refused: the file's memory goes back now.
      file.dispose();
    }
  };
  return s.router(contract.workouts, {
    uploadActivity: {
      middleware: [multipart],
      handler: async ({ res }) => upload(res, 'any'),
    },
    uploadFit: {
      middleware: [multipart],
      handler: async ({ res }) => upload(res, 'fit'),
    },
    listWorkouts: async ({ query, res }) => {
      return { status: 200, body: await listWorkoutPage(readDbOf(res, deps), actorOf(res), query) };
    },
    getWorkout: async ({ params, res }) => {
      return { status: 200, body: await getWorkout(readDbOf(res, deps), actorOf(res), params.id) };
    },
    getWorkoutFile: async ({ params, res }) => {
      const file = await getWorkoutFile(readDbOf(res, deps), actorOf(res), params.id);
      res.setHeader('Content-Disposition', contentDisposition(file.fileName));
      // The hash of the bytes is a strong validator.
      res.setHeader('ETag', `"${file.sha256}"`);
      // ts-rest sends a non-JSON body as is; the contract types it as the Blob clients receive.
      return { status: 200, body: file.bytes as unknown as Blob };
    },
    // On the primary: the first read of a workout's streams decodes its file and stores them.
    getWorkoutStreams: async ({ params, query, res }) => {
      return { status: 200, body: await getWorkoutStreams(services, actorOf(res), params.id, query.maxPoints) };
    },
    deleteWorkout: async ({ params, res }) => {
      await removeWorkout(writeDepsOf(res, deps), actorOf(res), params.id);
      return { status: 204, body: undefined };
    },
  });
}
