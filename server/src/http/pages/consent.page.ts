import { type Scope, SCOPE_DESCRIPTIONS } from '@pacer/contract';
import { type AuthorizationRequest, consentMayBeRemembered } from '../../modules/oauth/authorization.service.ts';
import { redirectTargetLabel } from '../../modules/oauth/redirect-uri.ts';
import { errorAlert, html, page, type SafeHtml } from './html.ts';

/** Name of the consent form's checkboxes: one per requested scope, the ones ticked are granted. */
export const GRANTED_SCOPE_FIELD = 'granted_scope';

export interface ConsentPageOptions {
  /** The scopes ticked; every requested scope when left out (what the app asked for). */
  readonly ticked?: readonly string[];
  /** Why the last answer was not taken (nothing ticked). */
  readonly error?: string;
}

/**
 * The consent page (docs/design.md §3): who asks, where you go back to, and
 * one checkbox per requested scope, labelled with what it allows, all ticked
 * at first. The user may untick any; the grant gets the ticked ones only.
 */
export function consentPage(
  request: AuthorizationRequest,
  csrf: string,
  mcpResource: string,
  options: ConsentPageOptions = {},
): string {
  // Where the code goes: a web host, or the scheme of the app that opens it.
  const host = redirectTargetLabel(request.redirectUri);
  const hidden = {
    client_id: request.client.clientId,
    redirect_uri: request.redirectUri,
    response_type: 'code',
    scope: request.scopes.join(' '),
    state: request.state,
    code_challenge: request.codeChallenge,
    code_challenge_method: 'S256',
    resource: request.resource ?? undefined,
  };
  const fields = Object.entries(hidden)
    .filter((entry): entry is [string, string] => entry[1] !== undefined)
    .map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}" />`);
  const ticked = new Set(options.ticked ?? request.scopes);
  // The label is the plain-language description alone: it is the checkbox's accessible name.
  const scopes = request.scopes.map(
    (scope) =>
      html`<li>
        <label class="check"
          ><input
            type="checkbox"
            name="${GRANTED_SCOPE_FIELD}"
            value="${scope}"
            ${ticked.has(scope) ? html`checked` : undefined}
          />
          ${SCOPE_DESCRIPTIONS[scope as Scope] ?? scope}</label
        >
        <code>${scope}</code>
      </li>`,
  );
  const via = request.resource === mcpResource ? 'through its AI assistant connection (MCP)' : undefined;
  const name = request.client.name;
  return page(
    'Allow access',
    html`<h1>Allow ${name} to use your Pacer data?</h1>
      ${unverifiedNotice(request, host)} ${askedEachTimeNotice(request)} ${errorAlert(options.error)}
      <form method="post" action="/api/oauth/authorize">
        <input type="hidden" name="_csrf" value="${csrf}" />
        ${fields}
        <fieldset>
          <legend><strong>${name}</strong> ${via} asks for permission to:</legend>
          <p class="hint">Untick what you do not want to allow; the app gets only what stays ticked.</p>
          <ul>
            ${scopes}
          </ul>
        </fieldset>
        <p>
          After you choose, you go back to <strong>${host}</strong>. You can revoke access at any time in
          <a href="/settings">Settings</a>.
        </p>
        <button type="submit" name="decision" value="approve">Approve</button>
        <button type="submit" name="decision" value="deny">Deny</button>
      </form>`,
  );
}

/**
 * A dynamically registered client named itself (RFC 7591 §2 metadata is
 * whatever the registrant sent): the page says so, next to where the user
 * returns, so a look-alike name is not taken for a checked one.
 */
function unverifiedNotice(request: AuthorizationRequest, host: string): SafeHtml | undefined {
  if (request.client.kind !== 'dcr') return undefined;
  return html`<p role="note">
    <strong>Unverified app:</strong> <q>${request.client.name}</q> is the name this app registered under (dynamic
    registration: the name it gave itself, or one made from its address when it gave none); Pacer has not checked who
    made it. It receives the answer at <strong>${host}</strong>.
    Continue only if you are connecting it to Pacer yourself right now.
  </p>`;
}

/** Why a user who approved before sees the page again (`consentMayBeRemembered`, RFC 8252 §8.6). */
function askedEachTimeNotice(request: AuthorizationRequest): SafeHtml | undefined {
  if (consentMayBeRemembered(request)) return undefined;
  return html`<p>
    Pacer asks each time this app connects: it receives the answer on your device, where any program could claim to be
    it.
  </p>`;
}

export function untrustedRequestPage(message: string): string {
  return page(
    'Request not valid',
    html`<h1>This sign-in request is not valid</h1>
      <p role="alert">${message}</p>
      <p>Go back to the application and try again, or contact its developer.</p>`,
  );
}
