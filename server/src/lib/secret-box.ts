import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';

/**
 * Seals secrets the server must be able to read back: an app's webhook
 * secret is the HMAC key of signed deliveries, so a hash alone cannot check
 * a signature. AES-256-GCM (NIST SP 800-38D) with a random 96-bit IV per
 * seal; the key is derived with HKDF-SHA256 (RFC 5869) from
 * `PACER_SECRET_KEY`, or from a random key file in the data dir when that is
 * unset. The database therefore never holds a usable secret on its own.
 *
 * Sealed form: `v1.<iv>.<ciphertext>.<tag>` (base64url parts).
 */
export class SecretBox {
  private readonly key: Buffer;
  private readonly material: string;

  private constructor(key: Buffer, material: string) {
    this.key = key;
    this.material = material;
  }

  /** From key material (at least 32 characters of it). */
  static fromKeyMaterial(material: string): SecretBox {
    if (material.length < 32) throw new Error('secret key material must be at least 32 characters');
    const key = Buffer.from(hkdfSync('sha256', material, 'pacer', 'pacer secret box v1', 32));
    return new SecretBox(key, material);
  }

  /**
   * `PACER_SECRET_KEY` when set; else `<dataDir>/secret.key`, created (mode
   * 0600) with 256 random bits on first use. Two processes starting at once
   * agree: the file is created exclusively and the loser reads the winner's.
   * Processes on different machines must share `PACER_SECRET_KEY`.
   */
  static async load(options: { readonly secretKey: string | undefined; readonly dataDir: string }): Promise<SecretBox> {
    if (options.secretKey !== undefined) return SecretBox.fromKeyMaterial(options.secretKey);
    const file = path.join(options.dataDir, 'secret.key');
    await fs.mkdir(options.dataDir, { recursive: true, mode: 0o700 });
    try {
      await fs.writeFile(file, `${randomBytes(32).toString('base64url')}\n`, { flag: 'wx', mode: 0o600 });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    // A reader racing the writer can see an empty file for a moment.
    for (let attempt = 0; ; attempt += 1) {
      const material = (await fs.readFile(file, 'utf8')).trim();
      if (material.length >= 32) return SecretBox.fromKeyMaterial(material);
      if (attempt >= 50) throw new Error(`${file} does not hold a key (at least 32 characters)`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  /**
   * A key for one purpose (e.g. `csrf`, `device`), derived from the same key
   * material with HKDF (RFC 5869) under its own label, so a value made for one
   * purpose never passes for another and the sealing key is never reused.
   */
  macKey(purpose: string): Buffer {
    return Buffer.from(hkdfSync('sha256', this.material, 'pacer', `pacer ${purpose} mac v1`, 32));
  }

  seal(plaintext: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const sealed = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return [
      'v1',
      iv.toString('base64url'),
      sealed.toString('base64url'),
      cipher.getAuthTag().toString('base64url'),
    ].join('.');
  }

  /** The plaintext, or `undefined` when it was sealed with another key or was altered. */
  open(sealed: string): string | undefined {
    const [version, iv, data, tag] = sealed.split('.');
    if (version !== 'v1' || iv === undefined || data === undefined || tag === undefined) return undefined;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8');
    } catch {
      return undefined;
    }
  }
}
