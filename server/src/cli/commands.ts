import { parseArgs } from 'node:util';
import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';
import { createUser } from '../modules/accounts/user.service.ts';
import { createApp, listApps, rotateWebhookSecret } from '../modules/oauth/client.service.ts';
import { SecretBox } from '../lib/secret-box.ts';
import { issueDeveloperToken } from '../modules/oauth/token.service.ts';
import { AppError } from '../errors.ts';
import { openDatabase } from '../db/open-database.ts';
import { migrateQueues } from '../queue/boss.ts';

export interface CommandContext {
  readonly config: Config;
  readonly logger: Logger;
  readonly args: readonly string[];
  readonly out: (text: string) => void;
}

type Printable = Record<string, unknown>;

function print(context: CommandContext, json: boolean, value: Printable, human: string): void {
  context.out(json ? JSON.stringify(value) : human);
}

async function withDatabase<T>(
  context: CommandContext,
  run: (db: Awaited<ReturnType<typeof openDatabase>>['db']) => Promise<T>,
): Promise<T> {
  const database = await openDatabase(context.config, context.logger, { migrate: context.config.migrateOnStart });
  try {
    return await run(database.db);
  } finally {
    await database.close();
  }
}

const COMMANDS: Record<string, { usage: string; run: (context: CommandContext) => Promise<void> }> = {
  migrate: {
    usage: 'migrate',
    run: async (context) => {
      // Whatever PACER_MIGRATE_ON_START says: this is the command that migrates when start does not.
      const database = await openDatabase(context.config, context.logger, { migrate: true });
      try {
        await migrateQueues({ connectionString: database.sessionUrl, logger: context.logger });
      } finally {
        await database.close();
      }
      context.out('database is up to date');
    },
  },
  'user:create': {
    usage: 'user:create --email E --password P [--admin] [--name N] [--time-zone TZ] [--json]',
    run: async (context) => {
      const { values } = parseArgs({
        args: [...context.args],
        options: {
          email: { type: 'string' },
          password: { type: 'string' },
          name: { type: 'string' },
          'time-zone': { type: 'string' },
          admin: { type: 'boolean', default: false },
          json: { type: 'boolean', default: false },
        },
      });
      const user = await withDatabase(context, (db) =>
        createUser(db, {
          email: values.email ?? '',
          password: values.password ?? '',
          name: values.name,
          timeZone: values['time-zone'],
          admin: values.admin,
        }),
      );
      print(
        context,
        values.json,
        { id: user.id, email: user.email, role: user.role, name: user.name, timeZone: user.timeZone },
        `created ${user.role} ${user.email} (${user.id})`,
      );
    },
  },
  'app:create': {
    usage:
      'app:create --name N --redirect-uri U [--redirect-uri U2] [--scope S ...] [--public] [--owner EMAIL] [--json]',
    run: async (context) => {
      const { values } = parseArgs({
        args: [...context.args],
        options: {
          name: { type: 'string' },
          'redirect-uri': { type: 'string', multiple: true, default: [] },
          scope: { type: 'string', multiple: true, default: [] },
          public: { type: 'boolean', default: false },
          owner: { type: 'string' },
          json: { type: 'boolean', default: false },
        },
      });
      const secretBox = await SecretBox.load(context.config);
      const app = await withDatabase(context, (db) =>
        createApp(db, {
          name: values.name ?? '',
          redirectUris: values['redirect-uri'],
          scopes: values.scope,
          isPublic: values.public,
          ownerEmail: values.owner,
          secretBox,
        }),
      );
      const result = {
        clientId: app.clientId,
        ...(app.clientSecret ? { clientSecret: app.clientSecret } : {}),
        webhookSecret: app.webhookSecret,
        name: app.name,
        redirectUris: app.redirectUris,
        scopes: app.scopes,
        public: app.isPublic,
      };
      print(
        context,
        values.json,
        result,
        [
          `created app "${app.name}"`,
          `clientId:      ${app.clientId}`,
          ...(app.clientSecret ? [`clientSecret:  ${app.clientSecret}`] : []),
          `webhookSecret: ${app.webhookSecret}`,
          'The secrets are shown only now; store them safely.',
        ].join('\n'),
      );
    },
  },
  'app:webhook-secret': {
    usage: 'app:webhook-secret --client-id ID [--json]',
    run: async (context) => {
      const { values } = parseArgs({
        args: [...context.args],
        options: { 'client-id': { type: 'string' }, json: { type: 'boolean', default: false } },
      });
      const clientId = values['client-id'];
      if (!clientId) throw AppError.validation('client-id', 'is required');
      const secretBox = await SecretBox.load(context.config);
      const rotated = await withDatabase(context, (db) => rotateWebhookSecret(db, secretBox, { clientId }));
      print(
        context,
        values.json,
        { clientId: rotated.clientId, webhookSecret: rotated.webhookSecret },
        [
          `rotated the webhook secret of "${rotated.name}"`,
          `webhookSecret: ${rotated.webhookSecret}`,
          'The old secret stopped matching now. The new one is shown only now; store it safely.',
        ].join('\n'),
      );
    },
  },
  'app:list': {
    usage: 'app:list [--json]',
    run: async (context) => {
      const { values } = parseArgs({ args: [...context.args], options: { json: { type: 'boolean', default: false } } });
      const apps = await withDatabase(context, (db) => listApps(db));
      const rows = apps.map((app) => ({
        clientId: app.clientId,
        name: app.name,
        kind: app.kind,
        public: app.isPublic,
        redirectUris: app.redirectUris,
        scopes: app.scopes,
        createdAt: app.createdAt.toISOString(),
      }));
      print(
        context,
        values.json,
        { apps: rows },
        rows.length === 0
          ? 'no apps'
          : rows.map((row) => `${row.clientId}  ${row.name}  (${row.kind}${row.public ? ', public' : ''})`).join('\n'),
      );
    },
  },
  'token:create': {
    usage: 'token:create --email E --scope S [--scope S2 ...] [--resource URL] [--expires-in SECONDS] [--json]',
    run: async (context) => {
      const { values } = parseArgs({
        args: [...context.args],
        options: {
          email: { type: 'string' },
          scope: { type: 'string', multiple: true, default: [] },
          resource: { type: 'string' },
          'expires-in': { type: 'string' },
          json: { type: 'boolean', default: false },
        },
      });
      const expiresIn =
        values['expires-in'] === undefined ? context.config.accessTokenTtlSecs : Number(values['expires-in']);
      if (!Number.isInteger(expiresIn) || expiresIn < 60)
        throw new Error('--expires-in must be a whole number of seconds, at least 60');
      const token = await withDatabase(context, (db) =>
        issueDeveloperToken(db, {
          email: values.email ?? '',
          scopes: values.scope,
          resource: values.resource,
          expiresInSecs: expiresIn,
          allowedResources: [context.config.baseUrl, context.config.mcpResource],
        }),
      );
      print(
        context,
        values.json,
        {
          access_token: token.accessToken,
          token_type: token.tokenType,
          expires_in: token.expiresIn,
          scope: token.scope,
          ...(token.resource ? { resource: token.resource } : {}),
          client_id: token.clientId,
        },
        [
          `access token (shown once): ${token.accessToken}`,
          `scope: ${token.scope}`,
          `expires in: ${token.expiresIn} s`,
          ...(token.resource ? [`resource: ${token.resource}`] : []),
        ].join('\n'),
      );
    },
  },
};

COMMANDS['import'] = {
  usage: 'import <folder-or-files...> --token ACCESS_TOKEN [--base-url URL] [--concurrency N] [--json]',
  run: async (context) => {
    const { values, positionals } = parseArgs({
      args: [...context.args],
      allowPositionals: true,
      options: {
        token: { type: 'string' },
        'base-url': { type: 'string' },
        // The server decodes one file per user at a time; more overlaps only the reading of the files.
        concurrency: { type: 'string', default: '1' },
        json: { type: 'boolean', default: false },
      },
    });
    if (!values.token)
      throw new AppError('validation_failed', 'import needs --token (an access token with workout:write)');
    if (positionals.length === 0)
      throw new AppError('validation_failed', 'import needs at least one folder or .fit file');
    const concurrency = Number(values.concurrency);
    if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 16) {
      throw new AppError('validation_failed', '--concurrency must be a whole number from 1 to 16');
    }
    const interactive = !values.json && process.stderr.isTTY;
    // Loaded on demand: the other commands need no HTTP client.
    const { importFitFiles, progressLine } = await import('./import.command.ts');
    const result = await importFitFiles({
      baseUrl: values['base-url'] ?? context.config.baseUrl,
      token: values.token,
      paths: positionals,
      concurrency,
      onProgress: (progress) => {
        // A bar redrawn in place on a terminal; one line per file otherwise.
        if (values.json) return;
        if (interactive) process.stderr.write(`\r${progressLine(progress)}`);
        else context.out(progressLine(progress));
      },
    });
    if (interactive) process.stderr.write('\n');
    print(
      context,
      values.json,
      {
        total: result.total,
        created: result.created,
        updated: result.updated,
        skipped: result.skipped,
        failed: result.failed,
      },
      [
        `${result.total} files: ${result.created} created, ${result.updated} updated, ${result.skipped} skipped (duplicate bytes), ${result.failed.length} failed`,
        ...result.failed.map((failure) => `  failed ${failure.file}: ${failure.reason}`),
      ].join('\n'),
    );
    if (result.failed.length > 0) process.exitCode = 1;
  },
};

export function usage(): string {
  return [
    'Usage: npm run pacer -- <command> [options]',
    '',
    '  start',
    ...Object.values(COMMANDS).map((command) => `  ${command.usage}`),
  ].join('\n');
}

export function findCommand(name: string) {
  return COMMANDS[name];
}
