/**
 * The SDK's build for every export condition other than `node` (browsers,
 * web bundlers): no `node:*` import anywhere in it, and `uploadFit` given a
 * file path says to pass the bytes instead of failing to load node:fs.
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type * as Sdk from '@pacer/client-sdk';
import { describe, expect, it } from 'vitest';

const sdkDist = path.join(import.meta.dirname, '..', '..', 'client-sdk', 'dist');

describe('the SDK browser build', () => {
  it('imports nothing from node:* (the node build does, for file paths)', async () => {
    const browserFiles = (await readdir(path.join(sdkDist, 'browser'))).filter((name) => /\.c?js$/.test(name));
    expect(browserFiles).toContain('index.js');
    for (const name of browserFiles) {
      expect(await readFile(path.join(sdkDist, 'browser', name), 'utf8'), name).not.toMatch(/node:|fs\/promises/);
    }
    const nodeFiles = (await readdir(sdkDist)).filter((name) => name.endsWith('.js'));
    const nodeText = (await Promise.all(nodeFiles.map((name) => readFile(path.join(sdkDist, name), 'utf8')))).join('');
    expect(nodeText).toContain('node:fs/promises');
  });

  it('refuses a file path in uploadFit with a TypeError before any request', async () => {
    const url = pathToFileURL(path.join(sdkDist, 'browser', 'index.js')).href;
    const sdk = (await import(url)) as typeof Sdk;
    // Port 9 (discard): a request, were one made, would fail with a network PacerError, not this TypeError.
    const upload = sdk.uploadFit(
      { baseUrl: 'http://127.0.0.1:9', accessToken: 'pat_test', retry: false },
      { file: '/tmp/ride.fit' },
    );
    await expect(upload).rejects.toThrow(TypeError);
    await expect(upload).rejects.toThrow(/only be read under Node\.js; pass a Blob, File or Uint8Array/);
  });
});
