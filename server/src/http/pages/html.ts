import type { Response } from 'express';
import { STYLESHEET_PATH } from './stylesheet.ts';

/** Escape text for HTML element content and quoted attribute values. */
export function escapeHtml(value: string): string {
  return value
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

/** A tagged template whose interpolations are escaped unless they are `SafeHtml`. */
export class SafeHtml {
  readonly value: string;
  constructor(value: string) {
    this.value = value;
  }
  toString(): string {
    return this.value;
  }
}

type Interpolation = string | number | SafeHtml | readonly SafeHtml[] | undefined | null | false;

export function html(strings: TemplateStringsArray, ...values: Interpolation[]): SafeHtml {
  let out = strings[0] ?? '';
  values.forEach((value, index) => {
    if (value instanceof SafeHtml) out += value.value;
    else if (Array.isArray(value)) out += value.map((part: SafeHtml) => part.value).join('');
    else if (value !== undefined && value !== null && value !== false) out += escapeHtml(String(value));
    out += strings[index + 1] ?? '';
  });
  return new SafeHtml(out);
}

/** The `<body>` class of a page with rules of its own in pacer.css (each of them starts with it). */
export type PageClass = 'page-settings' | 'page-developer' | 'page-webhooks' | 'page-dashboard' | 'page-admin';

/** A whole page: the shared stylesheet (linked, cached by the browser; no inline CSS), then `body` in `<main>`. */
export function page(title: string, body: SafeHtml, bodyClass?: PageClass): string {
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>${title} · Pacer</title>
        <link rel="stylesheet" href="${STYLESHEET_PATH}" />
      </head>
      <body${bodyClass ? html` class="${bodyClass}"` : undefined}>
        <main>${body}</main>
      </body>
    </html>`.value;
}

/** Answers with a rendered page (pageHeaders already made it `no-store`). */
export function sendPage(res: Response, pageHtml: string, status = 200): void {
  res.status(status).type('html').send(pageHtml);
}

export interface MessagePage {
  readonly title: string;
  /** The `<h1>`; the title when left out. */
  readonly heading?: string;
  readonly message: string;
  readonly back?: { readonly href: string; readonly label: string };
}

/** A page that only says something (an error, a refusal), with a link back. */
export function sendMessagePage(res: Response, status: number, view: MessagePage): void {
  const back = view.back ? html`<nav><a href="${view.back.href}">${view.back.label}</a></nav>` : undefined;
  sendPage(res, page(view.title, html`<h1>${view.heading ?? view.title}</h1><p>${view.message}</p>${back}`), status);
}

/**
 * The 404 page of the signed-in pages: says what was not found and links back, and never says whether
 * the thing exists for someone else.
 */
export function sendNotFoundPage(res: Response, message: string, back: { href: string; label: string }): void {
  sendMessagePage(res, 404, { title: 'Not found', message, back });
}

/** The developer portal's answer for another developer's app, or one that does not exist. */
export function sendNoSuchApp(res: Response): void {
  sendNotFoundPage(res, 'You have no such app.', { href: '/developer', label: 'Back to your apps' });
}

// ---- pieces of forms and pages -----------------------------------------------------------

/** The hidden double-submit CSRF field (csrf.ts) of every form that posts. */
export function csrfField(csrf: string): SafeHtml {
  return html`<input type="hidden" name="_csrf" value="${csrf}" />`;
}

/** A form that is a single button: POSTs to `action` with the CSRF token. */
export function postButton(action: string, csrf: string, label: string, describedBy?: string): SafeHtml {
  return html`<form method="post" action="${action}">
    ${csrfField(csrf)}
    <button type="submit" ${describedBy ? html`aria-describedby="${describedBy}"` : undefined}>${label}</button>
  </form>`;
}

/** The confirmation shown after a redirect, if there is one. */
export function statusNotice(notice: string | undefined): SafeHtml | undefined {
  return notice ? html`<p class="notice" role="status">${notice}</p>` : undefined;
}

/** The error of a whole form or page, if there is one. */
export function errorAlert(error: string | undefined): SafeHtml | undefined {
  return error ? html`<p class="error" role="alert">${error}</p>` : undefined;
}

/** The message under one field (`<field>-error`), if the last submission had one for it. */
export function fieldError(
  fieldErrors: Readonly<Record<string, string>> | undefined,
  field: string,
): SafeHtml | undefined {
  const message = fieldErrors?.[field];
  return message ? html`<p class="field-error" id="${field}-error">${message}</p>` : undefined;
}
