import { type Request, type RequestHandler, type Response, Router } from 'express';
import type { Config } from '../../config.ts';
import type { Db } from '../../db/database.ts';
import type { User } from '../../db/tables.ts';
import { AppError } from '../../errors.ts';
import type { SecretBox } from '../../lib/secret-box.ts';
import { signInWithPassword, type SignInDeps } from '../../modules/accounts/login.service.ts';
import { signUp } from '../../modules/accounts/user.service.ts';
import { endSession, resolveSession, SESSION_TTL_MS, startSession } from '../../modules/accounts/session.service.ts';
import { consumeRateLimit, rateLimitHeaders } from '../../modules/rate-limit/rate-limit.service.ts';
import { clientIpOf } from '../client-address.ts';
import { clearCookie, DEVICE_COOKIE, readCookie, SESSION_COOKIE, setCookie } from './cookies.ts';
import { csrfTokenFor, setSessionCsrfCookie } from './csrf.ts';
import { fieldErrorsOf, formPost, formText } from './forms.ts';
import { csrfField, errorAlert, fieldError, html, page, postButton, type SafeHtml, sendPage } from './html.ts';

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

/** The account pages also make and check device cookies (login.service.ts), keyed by the server's secret. */
export interface AccountPageDeps extends PageDeps {
  readonly secretBox: SecretBox;
}

/** A device cookie lasts a year; signing in again renews it. */
const DEVICE_TTL_MS = 365 * 24 * 60 * 60 * 1000;

/** Only same-site relative paths may be a post-login destination (no open redirect). */
export function safeNextPath(value: unknown): string {
  if (typeof value !== 'string' || !value.startsWith('/') || value.startsWith('//') || value.startsWith('/\\')) {
    return '/';
  }
  return value;
}

/** Security headers for every HTML page we render. Styles come only from our stylesheet (stylesheet.ts): no inline CSS. */
export const pageHeaders: RequestHandler = (_req, res, next) => {
  res.setHeader('Content-Security-Policy', "default-src 'self'; style-src 'self'; frame-ancestors 'none'");
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('Cache-Control', 'no-store');
  next();
};

/** Loads the signed-in user (if any) into `res.locals.sessionUser`. */
export function loadSession(deps: PageDeps): RequestHandler {
  return (req, res, next) => {
    const token = readCookie(req, SESSION_COOKIE, deps.config.secureCookies);
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

/** The sign-in and sign-up form: the error, the CSRF and `next` fields, the `fields`, and the button. */
function accountForm(action: string, csrf: string, next: string, state: FormState, fields: SafeHtml, submit: string) {
  return html`${errorAlert(state.error)}
    <form method="post" action="${action}">
      ${csrfField(csrf)}
      <input type="hidden" name="next" value="${next}" />
      ${fields}
      <button type="submit">${submit}</button>
    </form>`;
}

function emailField(state: FormState): SafeHtml {
  return html`<label for="email">Email</label>
    <input id="email" name="email" type="email" autocomplete="username" required value="${state.email ?? ''}" />`;
}

function loginPage(csrf: string, next: string, state: FormState): string {
  const fields = html`${emailField(state)}
    <label for="password">Password</label>
    <input id="password" name="password" type="password" autocomplete="current-password" required />`;
  return page(
    'Sign in',
    html`<h1>Sign in to Pacer</h1>
      ${accountForm('/login', csrf, next, state, fields, 'Sign in')}
      <nav>No account yet? <a href="/signup?next=${encodeURIComponent(next)}">Create one</a></nav>`,
  );
}

function signupPage(csrf: string, next: string, state: FormState): string {
  const fields = html`<label for="name">Name</label>
    <input id="name" name="name" type="text" autocomplete="name" value="${state.name ?? ''}" />
    ${fieldError(state.fieldErrors, 'name')} ${emailField(state)} ${fieldError(state.fieldErrors, 'email')}
    <label for="password">Password</label>
    <input id="password" name="password" type="password" autocomplete="new-password" minlength="8" required />
    ${fieldError(state.fieldErrors, 'password')}`;
  return page(
    'Create account',
    html`<h1>Create your Pacer account</h1>
      ${accountForm('/signup', csrf, next, state, fields, 'Create account')}
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
      ${postButton('/logout', csrf, 'Sign out')}
      <nav>
        <a href="/dashboard">Dashboard</a> · <a href="/settings">Connected apps</a> ·
        <a href="/developer">Developer portal</a> · <a href="/docs">API docs</a>
      </nav>`,
  );
}

/** Where to go after signing in: the form's `next`, else the query's, if it is one of ours. */
function nextOf(req: Request): string {
  return safeNextPath((req.body as Record<string, unknown> | undefined)?.['next'] ?? req.query['next']);
}

const csrfOf = (deps: PageDeps, req: Request, res: Response) => csrfTokenFor(req, res, deps.config.secureCookies);

/** Start a session, and leave the CSRF token bound to it in the browser for the next page's scripts. */
async function signIn(deps: PageDeps, req: Request, res: Response, user: User, next: string): Promise<void> {
  const secure = deps.config.secureCookies;
  const session = await startSession(deps.db, user.id);
  setCookie(res, SESSION_COOKIE, session.token, { secure, maxAgeMs: SESSION_TTL_MS });
  setSessionCsrfCookie(req, res, session.token, secure);
  res.redirect(303, next);
}

/** A refused attempt: 429 with `Retry-After`, the same whatever the password was. */
function sendTooMany(res: Response, pageHtml: string, retryAfterSecs: number): void {
  res.setHeader('Retry-After', String(retryAfterSecs));
  sendPage(res, pageHtml, 429);
}

function waitText(seconds: number): string {
  return seconds < 120 ? `${seconds} seconds` : `${Math.ceil(seconds / 60)} minutes`;
}

/** `GET /` and `GET /logout`: the home page, with Sign out for a signed-in user. */
function showHome(deps: PageDeps, req: Request, res: Response): void {
  sendPage(res, homePage(csrfOf(deps, req, res), res.locals.sessionUser));
}

function showLogin(deps: PageDeps, req: Request, res: Response): void {
  const next = nextOf(req);
  if (res.locals.sessionUser) res.redirect(303, next);
  else sendPage(res, loginPage(csrfOf(deps, req, res), next, {}));
}

async function login(deps: PageDeps, signInDeps: SignInDeps, req: Request, res: Response): Promise<void> {
  const email = formText(req, 'email').trim();
  const password = formText(req, 'password');
  const next = nextOf(req);
  const secure = deps.config.secureCookies;
  const result =
    email && password
      ? await signInWithPassword(signInDeps, {
          email,
          password,
          address: clientIpOf(req),
          deviceToken: readCookie(req, DEVICE_COOKIE, secure),
        })
      : ({ outcome: 'refused' } as const);
  if (result.outcome === 'signed-in') {
    setCookie(res, DEVICE_COOKIE, result.deviceToken, { secure, maxAgeMs: DEVICE_TTL_MS });
    await signIn(deps, req, res, result.user, next);
  } else if (result.outcome === 'locked') {
    const error = `Too many sign-in attempts. Try again in ${waitText(result.retryAfterSecs)}.`;
    sendTooMany(res, loginPage(csrfOf(deps, req, res), next, { email, error }), result.retryAfterSecs);
  } else {
    sendPage(res, loginPage(csrfOf(deps, req, res), next, { email, error: 'Wrong e-mail or password.' }), 401);
  }
}

function showSignup(deps: PageDeps, req: Request, res: Response): void {
  sendPage(res, signupPage(csrfOf(deps, req, res), nextOf(req), {}));
}

/** Sign-ups per client address per hour, counted before the password is hashed; undefined when allowed. */
async function signupRefusal(deps: PageDeps, req: Request, res: Response): Promise<number | undefined> {
  const limit = deps.config.rateLimits.signupsPerHour;
  if (limit === 0) return undefined;
  const result = await consumeRateLimit(deps.db, { key: `signup:ip:${clientIpOf(req)}`, limit, windowSecs: 3600 });
  res.set(rateLimitHeaders(result));
  return result.allowed ? undefined : result.resetSecs;
}

async function signup(deps: PageDeps, req: Request, res: Response): Promise<void> {
  const email = formText(req, 'email').trim();
  const name = formText(req, 'name').trim() || undefined;
  const next = nextOf(req);
  const retryAfterSecs = await signupRefusal(deps, req, res);
  if (retryAfterSecs !== undefined) {
    const error = `Too many accounts were created from your network. Try again in ${waitText(retryAfterSecs)}.`;
    sendTooMany(
      res,
      signupPage(csrfOf(deps, req, res), next, { email, ...(name ? { name } : {}), error }),
      retryAfterSecs,
    );
    return;
  }
  try {
    const user = await signUp(
      deps.db,
      { email, password: formText(req, 'password'), name },
      { reservedEmails: [deps.config.mcp.dcrOwnerEmail] },
    );
    await signIn(deps, req, res, user, next);
  } catch (error) {
    if (!(error instanceof AppError) || (error.code !== 'validation_failed' && error.code !== 'conflict')) throw error;
    const state: FormState = {
      email,
      ...(name ? { name } : {}),
      error: error.code === 'conflict' ? error.message : 'Please correct the fields below.',
      fieldErrors: fieldErrorsOf(error),
    };
    sendPage(res, signupPage(csrfOf(deps, req, res), next, state), error.status);
  }
}

async function logout(deps: PageDeps, req: Request, res: Response): Promise<void> {
  const token = readCookie(req, SESSION_COOKIE, deps.config.secureCookies);
  if (token) await endSession(deps.db, token);
  clearCookie(res, SESSION_COOKIE, deps.config.secureCookies);
  res.redirect(303, '/login');
}

/** `/`, `/login`, `/signup` and `/logout`. */
export function accountPages(deps: AccountPageDeps): Router {
  const post = formPost();
  const signInDeps: SignInDeps = { db: deps.db, config: deps.config, deviceKey: deps.secretBox.macKey('device') };
  return Router()
    .get('/', (req, res) => showHome(deps, req, res))
    .get('/login', (req, res) => showLogin(deps, req, res))
    .post('/login', post, (req, res) => login(deps, signInDeps, req, res))
    .get('/signup', (req, res) => showSignup(deps, req, res))
    .post('/signup', post, (req, res) => signup(deps, req, res))
    .get('/logout', (req, res) => showHome(deps, req, res))
    .post('/logout', post, (req, res) => logout(deps, req, res));
}
