import type { Response } from 'express';
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

const STYLE = `
  :root { color-scheme: light dark; font-family: system-ui, sans-serif; }
  body { max-width: 28rem; margin: 3rem auto; padding: 0 1rem; line-height: 1.5; }
  h1 { font-size: 1.5rem; }
  label { display: block; margin-top: 1rem; font-weight: 600; }
  input { width: 100%; padding: .5rem; font-size: 1rem; box-sizing: border-box; }
  button { margin-top: 1.25rem; padding: .6rem 1.2rem; font-size: 1rem; cursor: pointer; }
  .error { color: #b00020; }
  .field-error { color: #b00020; font-size: .9rem; }
  nav { margin-top: 2rem; font-size: .9rem; }
`;

export function page(title: string, body: SafeHtml): string {
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>${title} · Pacer</title>
        <style>
          ${new SafeHtml(STYLE)}
        </style>
      </head>
      <body>
        <main>${body}</main>
      </body>
    </html>`.value;
}

/** The 404 page of the signed-in pages: never says whether the thing exists for someone else. */
/** Answers 404 with a page that says what was not found and links back. */
export function sendNotFoundPage(res: Response, message: string, back: { href: string; label: string }): void {
  res
    .status(404)
    .type('html')
    .send(
      page('Not found', html`<h1>Not found</h1><p>${message}</p><nav><a href="${back.href}">${back.label}</a></nav>`),
    );
}

/** The developer portal's answer for another developer's app, or one that does not exist. */
export function sendNoSuchApp(res: Response): void {
  sendNotFoundPage(res, 'You have no such app.', { href: '/developer', label: 'Back to your apps' });
}
