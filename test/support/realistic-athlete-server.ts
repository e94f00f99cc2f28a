/**
 * A test server with issue 21's realistic athlete seeded through its API and
 * its derived data settled. Kept apart from realistic-athlete.ts, which the
 * bench imports without a test server.
 */
import type { User } from '../../server/src/db/tables.ts';
import { makeUser, mintToken } from './factories.ts';
import {
  REALISTIC_ATHLETE_SCOPES,
  REALISTIC_ZONE,
  seedRealisticAthlete,
  type RealisticAthlete,
} from './realistic-athlete.ts';
import { waitForRecompute } from './recompute.ts';
import { startTestServer, type TestServer } from './test-server.ts';

export interface RealisticAthleteServer {
  readonly server: TestServer;
  readonly athlete: User;
  readonly token: string;
  readonly seeded: RealisticAthlete;
}

/** Starts a server and seeds the athlete (about 10 s); the caller stops `server`. */
export async function startRealisticAthleteServer(): Promise<RealisticAthleteServer> {
  const server = await startTestServer();
  const athlete = await makeUser(server.db, { timeZone: REALISTIC_ZONE });
  const token = (await mintToken(server.db, athlete, { scopes: [...REALISTIC_ATHLETE_SCOPES] })).token;
  const seeded = await seedRealisticAthlete(server.url, token);
  await waitForRecompute(server.db, athlete.id, undefined, 120_000);
  return { server, athlete, token, seeded };
}
