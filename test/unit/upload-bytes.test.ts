import { describe, expect, it } from 'vitest';
import { UploadBytes } from '../../server/src/http/fit-upload.middleware.ts';

const bytesOf = (length: number, seed: number) => Uint8Array.from({ length }, (_, i) => (i * 31 + seed) % 256);

describe('UploadBytes (an upload body read into memory of its own)', () => {
  it('keeps the chunks in order in one buffer of the declared size, read without a copy', () => {
    const file = new UploadBytes(10, 100);
    file.append(bytesOf(4, 1));
    file.append(bytesOf(6, 2));
    const bytes = file.bytes();
    expect(Buffer.isBuffer(bytes)).toBe(true);
    expect(bytes.buffer.byteLength).toBe(10);
    expect([...bytes]).toEqual([...bytesOf(4, 1), ...bytesOf(6, 2)]);
  });

  it('grows past its first size (a body without Content-Length) by doubling, up to the limit', () => {
    const chunks = Array.from({ length: 20 }, (_, i) => bytesOf(65_536, i));
    const file = new UploadBytes(undefined, 2_000_000);
    for (const chunk of chunks) file.append(chunk);
    const bytes = file.bytes();
    expect(file.size).toBe(20 * 65_536);
    // 256 KiB, 512 KiB, 1 MiB, then the limit: never more than the limit.
    expect(bytes.buffer.byteLength).toBe(2_000_000);
    expect(Buffer.compare(bytes, Buffer.concat(chunks))).toBe(0);
  });

  it('hands its memory back on dispose: every view of it reads as empty', () => {
    const file = new UploadBytes(1_000_000, 1_000_000);
    file.append(bytesOf(1_000_000, 3));
    const bytes = file.bytes();
    expect(bytes.length).toBe(1_000_000);
    file.dispose();
    expect((bytes.buffer as ArrayBuffer).detached).toBe(true);
    expect(bytes.length).toBe(0);
    expect(file.size).toBe(0);
    // Twice is harmless (the handler and a failure path may both dispose).
    file.dispose();
  });
});
