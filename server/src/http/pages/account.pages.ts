import express, { type Request, type RequestHandler, type Response, Router } from 'express';
import type { Config } from '../../config.ts';
import type { Db } from '../../db/database.ts';
import type { User } from '../../db/tables.ts';
import { AppError } from '../../errors.ts';
import { authenticateUser, createUser } from '../../modules/accounts/user.service.ts';
import { endSession, resolveSession, SESSION_TTL_MS, startSession } from '../../modules/accounts/session.service.ts';
import { clearCookie, readCookie, SESSION_COOKIE, setCookie } from './cookies.ts';
import { csrfTokenFor, requireCsrf } from './csrf.ts';
import { html, page, type SafeHtml } from './html.ts';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace -- Express's own augmentation point
  namespace Express {
    interface Locals {
      sessionUser?: User;
    }
  }
}

export interface PageDeps {
  readonly config: Config;
  readonly db: Db;
}

/** Only same-site relative paths may be a post-login destination (no open redirect). */
export function safeNextPath(value: unknown): string {
  if (typeof value !== 'string' || !value.startsWith('/') || value.startsWith('//') || value.startsWith('/\\')) {
    return '/';
  }
  return value;
}

/** Security headers for every HTML page we render. */
export const pageHeaders: RequestHandler = (_req, res, next) => {
  res.setHeader('Content-Security-Policy', "default-src 'self'; style-src 'unsafe-inline'; frame-ancestors 'none'");
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('Cache-Control', 'no-store');
  next();
};

/** Loads the signed-in user (if any) into `res.locals.sessionUser`. */
export function loadSession(deps: PageDeps): RequestHandler {
  return (req, res, next) => {
    const token = readCookie(req, SESSION_COOKIE);
    if (!token) {
      next();
      return;
    }
    resolveSession(deps.db, token).then(
      (user) => {
        if (user) res.locals.sessionUser = user;
        next();
      },
      (error: unknown) => next(error),
    );
  };
}

interface FormState {
  readonly email?: string;
  readonly name?: string;
  readonly error?: string;
  readonly fieldErrors?: Readonly<Record<string, string>>;
}

function fieldError(state: FormState, field: string): SafeHtml | undefined {
  const message = state.fieldErrors?.[field];
  return message ? html`<p class="field-error" id="${field}-error">${message}</p>` : undefined;
}

function loginPage(csrf: string, next: string, state: FormState): string {
  return page(
    'Sign in',
    html`<h1>Sign in to Pacer</h1>
      ${state.error ? html`<p class="error" role="alert">${state.error}</p>` : undefined}
      <form method="post" action="/login">
        <input type="hidden" name="_csrf" value="${csrf}" />
        <input type="hidden" name="next" value="${next}" />
        <label for="email">Email</label>
        <input id="email" name="email" type="email" autocomplete="username" required value="${state.email ?? ''}" />
        <label for="password">Password</label>
        <input id="password" name="password" type="password" autocomplete="current-password" required />
        <button type="submit">Sign in</button>
      </form>
      <nav>No account yet? <a href="/signup?next=${encodeURIComponent(next)}">Create one</a></nav>`,
  );
}

function signupPage(csrf: string, next: string, state: FormState): string {
  return page(
    'Create account',
    html`<h1>Create your Pacer account</h1>
      ${state.error ? html`<p class="error" role="alert">${state.error}</p>` : undefined}
      <form method="post" action="/signup">
        <input type="hidden" name="_csrf" value="${csrf}" />
        <input type="hidden" name="next" value="${next}" />
        <label for="name">Name</label>
        <input id="name" name="name" type="text" autocomplete="name" value="${state.name ?? ''}" />
        ${fieldError(state, 'name')}
        <label for="email">Email</label>
        <input id="email" name="email" type="email" autocomplete="username" required value="${state.email ?? ''}" />
        ${fieldError(state, 'email')}
        <label for="password">Password</label>
        <input id="password" name="password" type="password" autocomplete="new-password" minlength="8" required />
        ${fieldError(state, 'password')}
        <button type="submit">Create account</button>
      </form>
      <nav>Already registered? <a href="/login?next=${encodeURIComponent(next)}">Sign in</a></nav>`,
  );
}

function homePage(csrf: string, user: User | undefined): string {
  if (!user) {
    return page(
      'Pacer',
      html`<h1>Pacer</h1>
        <p>Your training data, for the apps and assistants you choose.</p>
        <nav><a href="/login">Sign in</a> · <a href="/signup">Create account</a> · <a href="/docs">API docs</a></nav>`,
    );
  }
  return page(
    'Pacer',
    html`<h1>Pacer</h1>
      <p>Signed in as <strong>${user.email}</strong>.</p>
      <form method="post" action="/logout">
        <input type="hidden" name="_csrf" value="${csrf}" />
        <button type="submit">Sign out</button>
      </form>
      <nav>
        <a href="/dashboard">Dashboard</a> · <a href="/settings">Connected apps</a> ·
        <a href="/developer">Developer portal</a> · <a href="/docs">API docs</a>
      </nav>`,
  );
}

export function accountPages(deps: PageDeps): Router {
  const router = Router();
  const secure = deps.config.secureCookies;
  const form = express.urlencoded({ extended: false, limit: '16kb' });
  const csrf = requireCsrf();

  const signIn = async (res: Response, user: User, next: string) => {
    const session = await startSession(deps.db, user.id);
    setCookie(res, SESSION_COOKIE, session.token, { secure, maxAgeMs: SESSION_TTL_MS });
    res.redirect(303, next);
  };
  const nextOf = (req: Request) =>
    safeNextPath((req.body as Record<string, unknown> | undefined)?.['next'] ?? req.query['next']);

  router.get('/', (req, res) => {
    res.type('html').send(homePage(csrfTokenFor(req, res, secure), res.locals.sessionUser));
  });

  router.get('/login', (req, res) => {
    const next = nextOf(req);
    if (res.locals.sessionUser) {
      res.redirect(303, next);
      return;
    }
    res.type('html').send(loginPage(csrfTokenFor(req, res, secure), next, {}));
  });

  router.post('/login', form, csrf, async (req, res) => {
    const body = req.body as Record<string, unknown>;
    const email = typeof body['email'] === 'string' ? body['email'].trim() : '';
    const password = typeof body['password'] === 'string' ? body['password'] : '';
    const next = nextOf(req);
    const user = email && password ? await authenticateUser(deps.db, email, password) : undefined;
    if (!user) {
      res
        .status(401)
        .type('html')
        .send(loginPage(csrfTokenFor(req, res, secure), next, { email, error: 'Wrong e-mail or password.' }));
      return;
    }
    await signIn(res, user, next);
  });

  router.get('/signup', (req, res) => {
    res.type('html').send(signupPage(csrfTokenFor(req, res, secure), nextOf(req), {}));
  });

  router.post('/signup', form, csrf, async (req, res) => {
    const body = req.body as Record<string, unknown>;
    const email = typeof body['email'] === 'string' ? body['email'].trim() : '';
    const name = typeof body['name'] === 'string' && body['name'].trim() !== '' ? body['name'].trim() : undefined;
    const password = typeof body['password'] === 'string' ? body['password'] : '';
    const next = nextOf(req);
    try {
      const user = await createUser(deps.db, { email, password, name });
      await signIn(res, user, next);
    } catch (error) {
      if (!(error instanceof AppError) || (error.code !== 'validation_failed' && error.code !== 'conflict'))
        throw error;
      const fieldErrors = Object.fromEntries((error.errors ?? []).map((entry) => [entry.path, entry.message]));
      res
        .status(error.status)
        .type('html')
        .send(
          signupPage(csrfTokenFor(req, res, secure), next, {
            email,
            ...(name ? { name } : {}),
            error: error.code === 'conflict' ? error.message : 'Please correct the fields below.',
            fieldErrors,
          }),
        );
    }
  });

  router.get('/logout', (req, res) => {
    res.type('html').send(homePage(csrfTokenFor(req, res, secure), res.locals.sessionUser));
  });

  router.post('/logout', form, csrf, async (req, res) => {
    const token = readCookie(req, SESSION_COOKIE);
    if (token) await endSession(deps.db, token);
    clearCookie(res, SESSION_COOKIE, secure);
    res.redirect(303, '/login');
  });

  return router;
}
