import type {
  ActivityFileFormat,
  AsyncJobProgress,
  AsyncJobStatusValue,
  AsyncJobType,
  FeatureFlags,
  McpExecutionStatus,
  Memory,
  NutritionItem,
  PlannedStructure,
  PlannedWorkout,
  Profile,
  Recommendation,
  RecommendationAction,
  RecommendationEvidence,
  RecoveryDay,
  ReportType,
  TrainingLoadDay,
  WebhookAuthMethod,
  WebhookDeliveryState,
  WellnessField,
  WellnessRecord,
  Workout,
  WorkoutDevice,
  WorkoutLap,
} from '@pacer/contract';
import type { ColumnType, Generated, Insertable, Selectable, Updateable } from 'kysely';

/**
 * Every table the server reads or writes, in one place. Columns are written
 * in camelCase here; Kysely's CamelCasePlugin maps them to the snake_case
 * names the migrations create.
 *
 * A column that stores a field of the API takes its type from the zod
 * contract (`Omit<Workout, …>`, `WellnessRecord[K]`), so a field or enum value
 * added to the contract reaches the table type without being written twice;
 * only the columns the wire never shows (ids, owners, hashes, JSON as stored)
 * are spelled out here. Generating this file from the migrated schema
 * (kysely-codegen) was the other way: it would type every enum column
 * (`text` + `CHECK`) as `string` and every `jsonb` column as untyped JSON,
 * so the contract's enums and shapes would have to be restated as overrides,
 * and its drift check would need a migrated database in
 * `npm run check:generated`. The migrations still restate the enums in their
 * `CHECK`s (they are frozen in time); test/integration/schema-enums.test.ts
 * fails when a contract enum and its column's `CHECK` disagree.
 */

type Timestamp = ColumnType<Date, Date | string, Date | string>;
/** A timestamp the database fills in (`DEFAULT now()`). */
type DefaultedTimestamp = ColumnType<Date, Date | string | undefined, Date | string>;
/** `date` columns come back as `YYYY-MM-DD` strings (see the pg type parser in database.ts). */
type LocalDate = string;

/** Who a user is to the service; only the server knows it (the wire never shows it). */
export type UserRole = 'user' | 'admin';

/**
 * The profile's fields stored under their own names; `weight` and `ftp` keep
 * their unit in the column name (`weightKg`, `ftpWatts`).
 */
type ProfileColumns = Omit<Profile, 'id' | 'email' | 'timeZone' | 'weight' | 'ftp' | 'featureFlags' | 'updatedAt'> & {
  weightKg: Profile['weight'];
  ftpWatts: Profile['ftp'];
};

export interface UsersTable extends ProfileColumns {
  id: Generated<string>;
  email: string;
  passwordHash: string;
  role: UserRole;
  active: Generated<boolean>;
  timeZone: Generated<Profile['timeZone']>;
  featureFlags: ColumnType<FeatureFlags, FeatureFlags | undefined, FeatureFlags>;
  createdAt: DefaultedTimestamp;
  updatedAt: DefaultedTimestamp;
}

export interface SessionsTable {
  /** SHA-256 (hex) of the cookie value; the value itself is never stored. */
  idHash: string;
  userId: string;
  createdAt: DefaultedTimestamp;
  expiresAt: Timestamp;
}

export type ClientKind = 'developer' | 'app' | 'dcr';

export interface OauthClientsTable {
  id: Generated<string>;
  /** The public identifier clients send as `client_id`. */
  clientId: string;
  clientSecretHash: string | null;
  name: string;
  ownerUserId: string | null;
  kind: ClientKind;
  isPublic: boolean;
  redirectUris: string[];
  scopes: string[];
  webhookSecretHash: string | null;
  /** The webhook secret sealed with the server's key (lib/secret-box.ts), to check HMAC signatures. */
  webhookSecretSealed: ColumnType<string | null, string | null | undefined, string | null>;
  /**
   * DCR clients only: hash of the client name and the normalized redirect-URI
   * set; public registrations with the same name and set share the client
   * (unique where `kind = 'dcr'`; `registrationKeyOf` in
   * registration.service.ts). A confidential DCR client's key hashes its own
   * client id instead, so it is never shared (`confidentialKeyOf`).
   */
  registrationKey: string | null;
  createdAt: DefaultedTimestamp;
  updatedAt: DefaultedTimestamp;
}

export interface OauthGrantsTable {
  id: Generated<string>;
  clientId: string;
  userId: string;
  scopes: string[];
  resource: string | null;
  createdAt: DefaultedTimestamp;
  revokedAt: Timestamp | null;
  /** Why it was revoked, where the server knows: `refresh_reuse` when a rotated refresh token came back. */
  revokedReason: ColumnType<string | null, string | null | undefined, string | null>;
  lastUsedAt: Timestamp | null;
  /** When one of its tokens last wrote, while a read replica is configured (read-your-writes, db/read-replica.ts). */
  lastWriteAt: ColumnType<Date | null, Date | null | undefined, Date | null>;
}

export interface OauthAccessTokensTable {
  id: Generated<string>;
  grantId: string;
  /** SHA-256 (hex) of the token. */
  tokenHash: string;
  scopes: string[];
  resource: string | null;
  expiresAt: Timestamp;
  createdAt: DefaultedTimestamp;
  revokedAt: Timestamp | null;
  /** The refresh token issued with this access token, if any. */
  refreshTokenId: string | null;
}

export interface OauthRefreshTokensTable {
  id: Generated<string>;
  grantId: string;
  tokenHash: string;
  scopes: string[];
  resource: string | null;
  expiresAt: Timestamp | null;
  createdAt: DefaultedTimestamp;
  rotatedAt: Timestamp | null;
  revokedAt: Timestamp | null;
  /** The token this one was rotated into. */
  replacedBy: string | null;
}

export interface OauthAuthorizationCodesTable {
  id: Generated<string>;
  /** SHA-256 (hex) of the code. */
  codeHash: string;
  clientId: string;
  userId: string;
  redirectUri: string;
  scopes: string[];
  resource: string | null;
  codeChallenge: string;
  codeChallengeMethod: string;
  expiresAt: Timestamp;
  createdAt: DefaultedTimestamp;
  consumedAt: Timestamp | null;
  grantId: string | null;
}

export interface OauthConsentsTable {
  userId: string;
  clientId: string;
  /** '' for the REST resource. */
  resource: string;
  scopes: string[];
  createdAt: DefaultedTimestamp;
  updatedAt: DefaultedTimestamp;
}

/** One column per wellness field of the contract, as a stored record shows it (a value or `null`). */
type WellnessColumns = { [K in WellnessField]: WellnessRecord[K] };

export interface WellnessTable extends WellnessColumns {
  userId: string;
  date: LocalDate;
  /** `{ [sourceClientId]: rawJson }` */
  rawJson: ColumnType<Record<string, Record<string, unknown>>, string | undefined, string>;
  createdAt: DefaultedTimestamp;
  updatedAt: DefaultedTimestamp;
}

export interface NutritionLogsTable {
  id: Generated<string>;
  userId: string;
  date: LocalDate;
  /** Client id (public) of the app that sent the log. */
  source: string;
  rawJson: ColumnType<Record<string, unknown> | null, string | null, string | null>;
  createdAt: DefaultedTimestamp;
  updatedAt: DefaultedTimestamp;
}

/** An item's fields as the contract shows them; `logged_at` is stored as an instant and its offset, `source` on the log. */
export interface NutritionItemsTable extends Omit<NutritionItem, 'logged_at' | 'source' | 'planned'> {
  id: Generated<string>;
  logId: string;
  userId: string;
  position: number;
  loggedAt: Timestamp;
  /** The offset the sender wrote `logged_at` in, minutes east of UTC. */
  loggedAtOffsetMinutes: number;
  /** Not eaten yet (docs/science.md §3): counted by the fuel model, not by the totals. */
  planned: Generated<boolean>;
}

/** One fixed-window counter per key (e.g. DCR registrations per IP), shared by every process. */
export interface RateLimitCountersTable {
  key: string;
  count: number;
  windowStartedAt: Timestamp;
  expiresAt: Timestamp;
}

/** Sign-in attempts counted against one account or one client address (modules/accounts/login-throttle.service.ts). */
export interface LoginThrottlesTable {
  key: string;
  attempts: number;
  lockedUntil: Timestamp | null;
  lastAttemptAt: DefaultedTimestamp;
}

/** An address an account signed in from: its sign-ins from there are hashed in the known browsers' lane (login.service.ts). */
export interface LoginKnownAddressesTable {
  /** SHA-256 of `<user id>:<address>`. */
  key: string;
  userId: string;
  lastSignedInAt: DefaultedTimestamp;
}

/**
 * One Idempotency-Key of a REST write, scoped to (user, app). `inProgress`
 * while the first request runs; `completed` once its response is stored.
 */
export interface IdempotencyKeysTable {
  userId: string;
  /** Public client id of the app that sent the key. */
  clientId: string;
  key: string;
  /** Random per claim, so only the request that claimed the key completes or releases it. */
  claimId: string;
  /** SHA-256 (hex) of method, path and canonical body (JSON) or content length (multipart). */
  fingerprint: string;
  method: string;
  path: string;
  requestContentLength: number | null;
  /** SHA-256 of the uploaded file, when the route that parsed the body reported one (`res.locals.fitUpload`). */
  bodySha256: string | null;
  state: 'in_progress' | 'completed';
  responseStatus: number | null;
  responseContentType: string | null;
  responseBody: Buffer | null;
  createdAt: DefaultedTimestamp;
  completedAt: Timestamp | null;
  /** An `in_progress` claim older than this was abandoned (its process died) and may be taken over. */
  leaseExpiresAt: Timestamp;
  expiresAt: Timestamp;
}

export interface PlannedWorkoutsTable extends Omit<PlannedWorkout, 'id' | 'structure' | 'createdAt' | 'updatedAt'> {
  id: Generated<string>;
  userId: string;
  /** Validated against the contract before it is stored. */
  structure: ColumnType<PlannedStructure | null, string | null, string | null>;
  createdAt: DefaultedTimestamp;
  updatedAt: DefaultedTimestamp;
}

/** `device: { serial }` as the columns `deviceSerial`, …: a nested object of the contract, flattened. */
type Flattened<Prefix extends string, T> = { [K in keyof T & string as `${Prefix}${Capitalize<K>}`]: T[K] };

/**
 * An activity decoded from an uploaded activity file (FIT, TCX, GPX); the upsert key is (userId, fileSha256).
 * The contract's fields are columns of their own, except `device` (flattened) and
 * `file` (its own columns below); `possibleDuplicateOf` is computed on read.
 */
export interface WorkoutsTable
  extends
    Omit<
      Workout,
      | 'id'
      | 'metadata'
      | 'startTime'
      | 'laps'
      | 'device'
      | 'possibleDuplicateOf'
      | 'file'
      | 'truncated'
      | 'createdAt'
      | 'updatedAt'
    >,
    Flattened<'device', WorkoutDevice> {
  id: Generated<string>;
  userId: string;
  /** SHA-256 (hex) of the original bytes. */
  fileSha256: string;
  fileSize: number;
  fileName: string | null;
  /** The original file's format, told from its content at upload. */
  fileFormat: ColumnType<ActivityFileFormat, ActivityFileFormat | undefined, ActivityFileFormat>;
  metadata: ColumnType<Record<string, unknown>, string | undefined, string>;
  startTime: Timestamp;
  /** The activity's own offset from UTC, minutes east, when the file records one. */
  utcOffsetMinutes: number | null;
  laps: ColumnType<WorkoutLap[], string | undefined, string>;
  /** The file was damaged and the workout holds what could be read (fit-reframe.ts); default false. */
  truncated: ColumnType<boolean, boolean | undefined, boolean>;
  createdAt: DefaultedTimestamp;
  updatedAt: DefaultedTimestamp;
}

/** The original bytes of a workout's file (FIT, TCX or GPX; decompressed if it was sent gzip-compressed). */
export interface WorkoutFilesTable {
  workoutId: string;
  userId: string;
  bytes: Buffer;
}

/** Decoded time series of a workout, `{ channel: (number | null)[] }`: a cache filled on first read. */
export interface WorkoutStreamsTable {
  workoutId: string;
  userId: string;
  streams: ColumnType<Record<string, unknown>, string, string>;
}

export interface Database {
  users: UsersTable;
  sessions: SessionsTable;
  oauthClients: OauthClientsTable;
  oauthGrants: OauthGrantsTable;
  oauthAccessTokens: OauthAccessTokensTable;
  oauthRefreshTokens: OauthRefreshTokensTable;
  oauthAuthorizationCodes: OauthAuthorizationCodesTable;
  oauthConsents: OauthConsentsTable;
  wellness: WellnessTable;
  nutritionLogs: NutritionLogsTable;
  nutritionItems: NutritionItemsTable;
  rateLimitCounters: RateLimitCountersTable;
  loginThrottles: LoginThrottlesTable;
  loginKnownAddresses: LoginKnownAddressesTable;
  idempotencyKeys: IdempotencyKeysTable;
  plannedWorkouts: PlannedWorkoutsTable;
  workouts: WorkoutsTable;
  workoutFiles: WorkoutFilesTable;
  workoutStreams: WorkoutStreamsTable;
  webhookDeliveries: WebhookDeliveriesTable;
  webhookIds: WebhookIdsTable;
  webhookSignatures: WebhookSignaturesTable;
  memories: MemoriesTable;
  asyncJobs: AsyncJobsTable;
  reports: ReportsTable;
  mcpExecutions: McpExecutionsTable;
  mcpAuthFailures: McpAuthFailuresTable;
  derivedChanges: DerivedChangesTable;
  dailyTrainingLoad: DailyTrainingLoadTable;
  dailyRecovery: DailyRecoveryTable;
  fuelDays: FuelDaysTable;
  recommendations: RecommendationsTable;
}

export interface WebhookDeliveriesTable {
  id: Generated<string>;
  /** The app's public client id. */
  clientId: string;
  receivedAt: DefaultedTimestamp;
  /**
   * The raw body as received (UTF-8 JSON text); for a delivery whose secret did
   * not match (`bodyTruncated`), only its first few KiB.
   */
  body: string;
  /** Size of the body as received; null on rows stored before it was recorded (then `body` is all of it). */
  bodyBytes: number | null;
  /** SHA-256 (hex) of the body as received; null as `bodyBytes`. */
  bodySha256: string | null;
  /** `body` is a preview, not the payload. */
  bodyTruncated: Generated<boolean>;
  /** Request headers, secrets redacted. */
  headers: ColumnType<Record<string, string>, string, string>;
  /** Query parameters, secrets redacted. */
  query: ColumnType<Record<string, string | string[]>, string, string>;
  sourceIp: string | null;
  secretMatched: boolean;
  authMethod: WebhookAuthMethod | null;
  webhookId: string | null;
  /** Set on a repeated `X-Webhook-Id`: the delivery that took the id. */
  duplicateOf: string | null;
  /** `event` of an object body, for display and filtering. */
  event: string | null;
  state: WebhookDeliveryState;
  attempts: Generated<number>;
  replays: Generated<number>;
  errorCode: string | null;
  lastError: string | null;
  result: ColumnType<unknown, string | null | undefined, string | null>;
  queuedAt: Timestamp | null;
  startedAt: Timestamp | null;
  finishedAt: Timestamp | null;
  updatedAt: DefaultedTimestamp;
}

export interface WebhookIdsTable {
  clientId: string;
  webhookId: string;
  deliveryId: string;
  receivedAt: Timestamp;
}

/** Signature claims of signed deliveries sent without `X-Webhook-Id` (de-duplication within the signature window). */
export interface WebhookSignaturesTable {
  clientId: string;
  /** SHA-256 (hex) of the signature that matched: never the signature itself. */
  signatureSha256: string;
  deliveryId: string;
  receivedAt: DefaultedTimestamp;
}

export type User = Selectable<UsersTable>;
export type NewUser = Insertable<UsersTable>;
export type UserUpdate = Updateable<UsersTable>;
export type OauthClient = Selectable<OauthClientsTable>;
export type WellnessRow = Selectable<WellnessTable>;
export type NutritionLogRow = Selectable<NutritionLogsTable>;
export type NutritionItemRow = Selectable<NutritionItemsTable>;
export type PlannedWorkoutRow = Selectable<PlannedWorkoutsTable>;
export type WorkoutRow = Selectable<WorkoutsTable>;
export type WebhookDeliveryRow = Selectable<WebhookDeliveriesTable>;

export interface MemoriesTable extends Omit<Memory, 'id' | 'pinned' | 'createdAt' | 'updatedAt'> {
  id: Generated<string>;
  userId: string;
  pinned: Generated<boolean>;
  createdAt: DefaultedTimestamp;
  updatedAt: DefaultedTimestamp;
}
export type MemoryRow = Selectable<MemoriesTable>;

type Json<T> = ColumnType<T, string, string>;

export interface AsyncJobsTable {
  id: Generated<string>;
  userId: string;
  /** Public client id of the app that started it. */
  clientId: string;
  type: AsyncJobType;
  status: AsyncJobStatusValue;
  input: Json<Record<string, unknown>>;
  progress: ColumnType<AsyncJobProgress | null, string | null | undefined, string | null>;
  result: ColumnType<Record<string, unknown> | null, string | null | undefined, string | null>;
  error: string | null;
  attempts: Generated<number>;
  createdAt: DefaultedTimestamp;
  startedAt: Timestamp | null;
  completedAt: Timestamp | null;
  updatedAt: DefaultedTimestamp;
}
export type AsyncJobRow = Selectable<AsyncJobsTable>;

export interface ReportsTable {
  /** The `report` job's id. */
  id: string;
  userId: string;
  type: ReportType;
  title: string;
  periodFrom: LocalDate;
  periodTo: LocalDate;
  markdown: string;
  data: Json<Record<string, unknown>>;
  createdAt: DefaultedTimestamp;
}
export type ReportRow = Selectable<ReportsTable>;

export interface McpExecutionsTable {
  id: Generated<number>;
  tool: string;
  clientId: string;
  userId: string;
  startedAt: Timestamp;
  durationMs: number;
  status: McpExecutionStatus;
  errorCode: string | null;
  /** SHA-256 of the canonical arguments: repeated calls can be told apart without storing data. */
  argsSha256: string;
}

/** Refused requests on `/mcp`, counted per minute (`at`, its start), client address and reason. */
export interface McpAuthFailuresTable {
  at: DefaultedTimestamp;
  /** `''` for rows counted before addresses were kept. */
  clientIp: Generated<string>;
  reason: string;
  count: Generated<number>;
}

/**
 * What an input write changed, as its change record names it (migrations/20261126T0201_derived_changes.ts,
 * 20261127T0101_derived_change_body_mass.ts): `body_mass` is a wellness day whose write sent a weight, which the
 * fuel model also reads.
 */
export type DerivedChangeKind =
  'wellness' | 'body_mass' | 'nutrition' | 'workouts' | 'profile' | 'planned_workouts' | 'day_rollover';

/** Append-only: an input write adds one in its transaction; the derived drainer deletes the ones it served. */
export interface DerivedChangesTable {
  id: Generated<number>;
  userId: string;
  kind: DerivedChangeKind;
  fromDate: LocalDate;
  createdAt: DefaultedTimestamp;
}

/** One day of the contract's training load, stored as the API shows it. */
export interface DailyTrainingLoadTable extends TrainingLoadDay {
  userId: string;
}

/** One day of the contract's recovery, stored as the API shows it. */
export interface DailyRecoveryTable extends Omit<RecoveryDay, 'components'> {
  userId: string;
  components: Json<RecoveryDay['components']>;
}

export interface FuelDaysTable {
  userId: string;
  date: LocalDate;
  startState: Json<Record<string, number>>;
  endState: Json<Record<string, number>>;
  points: Json<unknown[]>;
  assumptions: Json<string[]>;
  /** A recorded workout on the day that the logged food cannot fuel (docs/science.md §3). */
  incompleteLog: Generated<boolean>;
  /** The assumed meals (the usual intake) the day was drawn with: `[atMs, carbsG, absorptionType]` each. */
  assumedMeals: ColumnType<unknown[], string | undefined, string>;
  /** Whether the athlete had a usual intake when the day was drawn (without one: `not_logged`). */
  usualIntake: Generated<boolean>;
}

/** A suggestion of the rules (modules/recommendations); `dedupeKey` names the situation it is about. */
export interface RecommendationsTable extends Omit<
  Recommendation,
  'id' | 'evidence' | 'action' | 'createdAt' | 'updatedAt' | 'decidedAt'
> {
  id: Generated<string>;
  userId: string;
  evidence: Json<RecommendationEvidence>;
  action: Json<RecommendationAction>;
  dedupeKey: string;
  createdAt: DefaultedTimestamp;
  updatedAt: DefaultedTimestamp;
  /** When it left `open`. */
  decidedAt: Timestamp | null;
}
export type RecommendationRow = Selectable<RecommendationsTable>;
