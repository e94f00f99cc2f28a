/**
 * Signing an incoming-webhook delivery: `X-Webhook-Signature: v1=<hex
 * HMAC-SHA256(secret, timestamp + "." + raw body)>` with `X-Webhook-Timestamp`
 * in Unix seconds; Pacer accepts it within 5 minutes of its clock. Uses Web
 * Crypto, so it runs in Node.js ≥ 20 and in browsers alike.
 */
export interface SignedWebhook {
  /** The exact bytes that were signed: send this string as the body, unchanged. */
  readonly body: string;
  readonly headers: {
    readonly 'content-type': 'application/json';
    readonly 'x-webhook-timestamp': string;
    readonly 'x-webhook-signature': string;
  };
}

function hex(bytes: ArrayBuffer): string {
  return Array.from(new Uint8Array(bytes), (byte) => byte.toString(16).padStart(2, '0')).join('');
}

/**
 * Serialize `payload` as JSON and sign it with the app's webhook secret.
 * `timestampSecs` defaults to now.
 */
export async function signWebhook(
  secret: string,
  payload: unknown,
  timestampSecs: number = Math.floor(Date.now() / 1000),
): Promise<SignedWebhook> {
  const body = JSON.stringify(payload);
  const encoder = new TextEncoder();
  const key = await crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, [
    'sign',
  ]);
  const timestamp = String(Math.trunc(timestampSecs));
  const signature = await crypto.subtle.sign('HMAC', key, encoder.encode(`${timestamp}.${body}`));
  return {
    body,
    headers: {
      'content-type': 'application/json',
      'x-webhook-timestamp': timestamp,
      'x-webhook-signature': `v1=${hex(signature)}`,
    },
  };
}
