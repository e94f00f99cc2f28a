import { SCOPE_DESCRIPTIONS } from '@pacer/contract';
import express, { type Request, type Response, Router } from 'express';
import type { User } from '../../db/tables.ts';
import { AppError } from '../../errors.ts';
import {
  type ConnectedGrant,
  listConnectedApps,
  revokeGrant,
  type ServedResources,
  surfaceOf,
} from '../../modules/oauth/grant.service.ts';
import type { PageDeps } from './account.pages.ts';
import { csrfTokenFor, requireCsrf } from './csrf.ts';
import { html, page, type SafeHtml, sendNotFoundPage } from './html.ts';
import { signedInUserOr303 } from './session-guard.ts';

/** Fixed notices shown after a redirect; the query names one, never carries text. */
const NOTICES = {
  revoked: 'Access revoked. That connection’s tokens stop working at once.',
} as const;

const EXTRA_STYLE = html`<style>
  body {
    max-width: 40rem;
  }
  .grants {
    list-style: none;
    padding: 0;
  }
  .grants > li {
    border: 1px solid #8884;
    border-radius: 0.5rem;
    padding: 0.25rem 1rem 1rem;
    margin-top: 1rem;
  }
  .grants h3 {
    margin-bottom: 0.25rem;
  }
  dt {
    font-weight: 600;
    margin-top: 0.5rem;
  }
  dd {
    margin-left: 0;
  }
  dd ul {
    margin: 0;
    padding-left: 1.25rem;
  }
  .notice {
    border-left: 4px solid #2e7d32;
    padding-left: 0.75rem;
  }
</style>`;

function scopeLabel(scope: string): string {
  return (SCOPE_DESCRIPTIONS as Record<string, string | undefined>)[scope] ?? scope;
}

/** A moment in the user's own time zone, with the exact instant for machines. */
function formatWhen(when: Date, timeZone: string): SafeHtml {
  let text: string;
  try {
    text = new Intl.DateTimeFormat('en', { dateStyle: 'medium', timeStyle: 'short', timeZone }).format(when);
  } catch {
    text = `${when.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
  }
  return html`<time datetime="${when.toISOString()}">${text}</time>`;
}

function accessLabel(resource: string | null, resources: ServedResources): string {
  switch (surfaceOf(resource, resources)) {
    case 'rest':
      return 'REST API';
    case 'mcp':
      return 'MCP (AI assistants)';
    default:
      return resource ?? 'REST API';
  }
}

function grantItem(grant: ConnectedGrant, title: string, view: SettingsView): SafeHtml {
  const { user, csrf, resources } = view;
  const headingId = `grant-${grant.grantId}`;
  return html`<li>
    <h3 id="${headingId}">${title}</h3>
    <dl>
      <dt>Access</dt>
      <dd>${accessLabel(grant.resource, resources)}</dd>
      <dt>Allowed to</dt>
      <dd>
        <ul>
          ${grant.scopes.map((scope) => html`<li title="${scope}">${scopeLabel(scope)}</li>`)}
        </ul>
      </dd>
      <dt>Connected</dt>
      <dd>${formatWhen(grant.connectedAt, user.timeZone)}</dd>
      <dt>Last used</dt>
      <dd>${grant.lastUsedAt ? formatWhen(grant.lastUsedAt, user.timeZone) : 'never'}</dd>
    </dl>
    <form method="post" action="/settings/grants/${grant.grantId}/revoke">
      <input type="hidden" name="_csrf" value="${csrf}" />
      <button type="submit" aria-describedby="${headingId}">Revoke</button>
    </form>
  </li>`;
}

interface SettingsView {
  readonly user: User;
  readonly csrf: string;
  readonly apps: readonly ConnectedGrant[];
  readonly developerTokens: readonly ConnectedGrant[];
  readonly resources: ServedResources;
  readonly notice?: string | undefined;
}

function settingsPage(view: SettingsView): string {
  const items = (grants: readonly ConnectedGrant[], title: (grant: ConnectedGrant) => string) =>
    grants.map((grant) => grantItem(grant, title(grant), view));
  return page(
    'Connected apps',
    html`${EXTRA_STYLE}
      <h1>Connected apps</h1>
      ${view.notice ? html`<p class="notice" role="status">${view.notice}</p>` : undefined}
      <p>
        Apps and AI assistants you allowed to use your Pacer data. Revoking one stops all of its access at once; it
        would have to ask you again.
      </p>
      <section aria-labelledby="apps-heading">
        <h2 id="apps-heading">Apps</h2>
        ${
          view.apps.length === 0
            ? html`<p>No apps are connected to your account.</p>`
            : html`<ul class="grants">
                ${items(view.apps, (grant) => grant.appName)}
              </ul>`
        }
      </section>
      <section aria-labelledby="developer-tokens-heading">
        <h2 id="developer-tokens-heading">Developer tokens</h2>
        ${
          view.developerTokens.length === 0
            ? html`<p>You have no active developer tokens.</p>`
            : html`<ul class="grants">
                ${items(view.developerTokens, () => 'Developer token')}
              </ul>`
        }
      </section>
      <nav><a href="/">Home</a> · <a href="/developer">Developer portal</a></nav>`,
  );
}

/** `/settings`: the signed-in user's connected apps and developer tokens, each revocable. */
export function settingsPages(deps: PageDeps): Router {
  const router = Router();
  const secure = deps.config.secureCookies;
  const form = express.urlencoded({ extended: false, limit: '16kb' });
  const csrf = requireCsrf();
  const resources: ServedResources = { rest: deps.config.baseUrl, mcp: deps.config.mcpResource };

  router.get('/settings', async (req: Request, res: Response) => {
    const user = signedInUserOr303(req, res);
    if (!user) return;
    const { apps, developerTokens } = await listConnectedApps(deps.db, user.id);
    const noticeKey = req.query['notice'];
    const notice = noticeKey === 'revoked' ? NOTICES.revoked : undefined;
    res
      .type('html')
      .send(settingsPage({ user, csrf: csrfTokenFor(req, res, secure), apps, developerTokens, resources, notice }));
  });

  router.post('/settings/grants/:grantId/revoke', form, csrf, async (req: Request, res: Response) => {
    const user = res.locals.sessionUser;
    if (!user) {
      res.redirect(303, `/login?next=${encodeURIComponent('/settings')}`);
      return;
    }
    try {
      await revokeGrant(deps.db, { userId: user.id, grantId: String(req.params['grantId']) });
    } catch (error) {
      if (error instanceof AppError && error.code === 'not_found') {
        sendNotFoundPage(res, 'There is no such connected app on your account.', {
          href: '/settings',
          label: 'Back to settings',
        });
        return;
      }
      throw error;
    }
    res.redirect(303, '/settings?notice=revoked');
  });

  return router;
}
