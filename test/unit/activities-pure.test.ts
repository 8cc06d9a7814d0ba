import { describe, expect, it } from 'vitest';

import { humanSize } from '../../activities/adapters/images.ts';
import { sniff } from '../../activities/adapters/sniff.ts';
import { safeName } from '../../activities/adapters/storage.ts';
import { ConfigError, minioSettings, parseEnv } from '../../activities/core/config.ts';
import { generateSecret, hashKey, levelOf, maskKey } from '../../activities/identity/api-keys.ts';
import { uploadPaths } from '../../activities/images/images.ts';

const hex = (s: string) => Buffer.from(s.replace(/\s+/g, ''), 'hex');

describe('sniff', () => {
  it.each([
    ['ffd8ffe000104a464946', 'image/jpeg'],
    ['89504e470d0a1a0a', 'image/png'],
    ['474946383961', 'image/gif'],
    ['52494646000000005745425056503820', 'image/webp'],
    ['49492a00', 'image/tiff'],
    ['0000001c667479706865696300000000', 'image/heic'],
    ['00000018667479706d696631000000006d69663168656963', 'image/heic'],
    ['0000001c667479706d69663100000000', 'image/heif'],
    ['0000001c6674797061766966', 'image/avif'],
    ['255044462d312e37', 'application/pdf'],
    ['504b0304', 'application/zip'],
  ])('detects %s as %s from content', (bytes, mime) => {
    expect(sniff(hex(bytes)).mime).toBe(mime);
  });

  it('tells text from binary', () => {
    expect(sniff(Buffer.from('hello, world\nsecond line\n')).mime).toBe('text/plain');
    expect(sniff(Buffer.from([0, 1, 2, 3, 0, 5])).mime).toBe('application/octet-stream');
    expect(sniff(Buffer.alloc(0)).mime).toBe('application/octet-stream');
  });
});

describe('object names', () => {
  it('never lets a file name escape its folder', () => {
    expect(safeName('../../etc/passwd')).toBe('passwd');
    expect(safeName('..\\..\\boot.ini')).toBe('boot.ini');
    expect(safeName('..')).toBe('upload');
    expect(safeName('my photo (1).HEIC')).toBe('my_photo_1_.HEIC');
    expect(safeName('.hidden')).toBe('hidden');
    expect(safeName(undefined)).toBe('upload');
    const p = uploadPaths('org', 'usr_1', 'm1', '../x.png');
    // the original keeps the (safe) name; what is made from it is named by the media id alone
    expect(p).toMatchObject({
      original_path: 'org/usr_1/originals/m1-x.png',
      thumbnail_path: 'org/usr_1/thumbnails/m1.jpg',
      converted_path: 'org/usr_1/converted/m1.jpg',
    });
  });

  it('formats sizes for people', () => {
    expect(humanSize(512)).toBe('512 B');
    expect(humanSize(2048)).toBe('2.0 KB');
    expect(humanSize(5 * 1024 * 1024 + 1)).toBe('5.0 MB');
  });
});

describe('API keys', () => {
  it('are pk_ + 32 random bytes, hashed, masked, and ordered by permission level', () => {
    const a = generateSecret();
    expect(a).toMatch(/^pk_[A-Za-z0-9_-]{43}$/);
    expect(generateSecret()).not.toBe(a);
    expect(hashKey(a)).toMatch(/^[0-9a-f]{64}$/);
    expect(maskKey('ab12')).toBe('pk_ab12…');
    expect(levelOf(['basic'])).toBe(0);
    expect(levelOf(['basic', 'admin'])).toBe(1);
    expect(levelOf(['system_admin'])).toBe(2);
  });
});

describe('configuration', () => {
  it('applies the documented defaults', () => {
    const cfg = parseEnv({});
    expect(cfg).toMatchObject({
      HOST: '127.0.0.1',
      PORT: 8000,
      TEMPORAL_NAMESPACE: 'default',
      TEMPORAL_TASK_QUEUE: 'platform',
      MINIO_BUCKET: 'platform',
      DEFAULT_ORGANIZATION_ID: 'default',
      RATE_LIMIT_PER_MINUTE: 600,
      MAX_UPLOAD_MB: 25,
    });
    expect(cfg.maxUploadBytes).toBe(25 * 1024 * 1024);
    expect(cfg.TEMPORAL_ADDRESS).toBeUndefined();
  });

  it('takes an empty value as unset (its default), never 0 by coercion', () => {
    const cfg = parseEnv({
      GIFT_PROCESSING_LIMIT_SECONDS: '',
      GIFT_PROVIDER_ATTEMPTS: ' ',
      AUTH_FAILURES_PER_MINUTE: '',
      METRICS_ENABLED: '',
      PORT: '',
    });
    expect(cfg).toMatchObject({
      GIFT_PROCESSING_LIMIT_SECONDS: 86_400,
      GIFT_PROVIDER_ATTEMPTS: 20,
      AUTH_FAILURES_PER_MINUTE: 30,
      METRICS_ENABLED: true,
      PORT: 8000,
    });
  });

  it('refuses invalid values with the variable named', () => {
    expect(() => parseEnv({ PORT: 'eighty' })).toThrow(/PORT/);
    expect(() => parseEnv({ RATE_LIMIT_PER_MINUTE: '-1' })).toThrow(ConfigError);
  });

  it('reads MINIO_ENDPOINT as host:port', () => {
    expect(minioSettings(parseEnv({ MINIO_ENDPOINT: 'minio:9000' }))).toMatchObject({
      endPoint: 'minio',
      port: 9000,
      useSSL: false,
      accessKey: 'minioadmin',
    });
    expect(minioSettings(parseEnv({ MINIO_ENDPOINT: 's3.example.com', MINIO_USE_SSL: 'true' }))).toMatchObject({
      port: 443,
      useSSL: true,
    });
  });
});
