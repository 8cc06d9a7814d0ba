import { WorkflowFailedError } from '@temporalio/client';
import { ActivityFailure, ApplicationFailure, RetryState } from '@temporalio/common';
import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';

import { PlatformError } from '../../activities/core/errors.ts';
import { MalformedJson, mapError } from '../../edge/errors.ts';
import { RateLimiter } from '../../edge/rate-limit.ts';

describe('mapError', () => {
  it('never leaks a stack or message of an unexpected error, but logs it', () => {
    const log = vi.fn();
    const err = new Error('connection string mongodb://user:secret@host failed');
    const mapped = mapError(err, 'detail', log);
    expect(mapped).toEqual({ status: 500, body: { detail: 'Internal server error' }, headers: undefined });
    expect(log).toHaveBeenCalledWith(err);
    expect(mapError(err, 'success', () => {}).body).toEqual({ success: false, error: 'Internal server error' });
  });

  it('keeps PlatformError statuses, messages and headers in either shape', () => {
    const e = new PlatformError(429, 'Rate limit exceeded', undefined, { 'Retry-After': '12' });
    expect(mapError(e, 'detail', () => {})).toEqual({
      status: 429,
      body: { detail: 'Rate limit exceeded' },
      headers: { 'Retry-After': '12' },
    });
    expect(mapError(new PlatformError(404, 'Gift not found'), 'success', () => {}).body).toEqual({
      success: false,
      error: 'Gift not found',
    });
  });

  it('answers a server error of any origin with a fixed text per status and logs the detail', () => {
    const cases: [PlatformError, string][] = [
      [
        new PlatformError(
          502,
          'The support model provider failed: 401 Incorrect API key sk-…abcd at http://10.0.0.5:8000/v1',
        ),
        'An upstream service failed; try again later',
      ],
      [
        new PlatformError(500, 'CONFIG_ENCRYPTION_KEY is not set: provider secrets cannot be stored or read'),
        'Internal server error',
      ],
      [
        new PlatformError(501, 'webhook signing secret not configured (WEBHOOK_SIGNING_SECRET)'),
        'This function is not available on this platform',
      ],
      [
        new PlatformError(503, 'The points ledger is busy for this user; retry shortly', undefined, {
          'Retry-After': '1',
        }),
        'Temporarily unavailable; try again later',
      ],
    ];
    for (const [err, text] of cases) {
      const log = vi.fn();
      const mapped = mapError(err, 'detail', log);
      expect(mapped).toEqual({ status: err.status, body: { detail: text }, headers: err.headers });
      expect(mapError(err, 'success', () => {}).body).toEqual({ success: false, error: text });
      expect(log).toHaveBeenCalledWith(err);
    }
    // the same through a workflow: the activity's 5xx message stays in the log
    const app = ApplicationFailure.create({
      type: 'PlatformError',
      message: 'The documents model provider failed: getaddrinfo ENOTFOUND vllm.internal',
      nonRetryable: true,
      details: [{ status: 502 }],
    });
    const wf = new WorkflowFailedError('Workflow execution failed', app, RetryState.NON_RETRYABLE_FAILURE);
    const log = vi.fn();
    expect(mapError(wf, 'detail', log)).toMatchObject({
      status: 502,
      body: { detail: 'An upstream service failed; try again later' },
    });
    expect(log).toHaveBeenCalledWith(wf);
  });

  it("tells an operator (admin key, keyless route) the platform's own words of a server error, never an unexpected error's", () => {
    const notConfigured = new PlatformError(500, 'payment provider not configured');
    expect(mapError(notConfigured, 'detail', () => {}, 'operator')).toEqual({
      status: 500,
      body: { detail: 'payment provider not configured' },
      headers: undefined,
    });
    expect(mapError(notConfigured, 'detail', () => {}, 'end_user').body).toEqual({ detail: 'Internal server error' });
    const busy = new PlatformError(503, 'The points ledger is busy for this user; retry shortly', undefined, {
      'Retry-After': '1',
    });
    expect(mapError(busy, 'success', () => {}, 'operator')).toEqual({
      status: 503,
      body: { success: false, error: busy.message },
      headers: { 'Retry-After': '1' },
    });
    const log = vi.fn();
    const unexpected = new Error('ECONNREFUSED 10.0.0.3:9000');
    expect(mapError(unexpected, 'detail', log, 'operator').body).toEqual({ detail: 'Internal server error' });
    expect(log).toHaveBeenCalledWith(unexpected);
  });

  it('maps zod errors to 422 naming the field and malformed JSON to 400', () => {
    const zerr = z.object({ a: z.object({ b: z.number() }) }).safeParse({ a: { b: 'x' } }).error!;
    const mapped = mapError(zerr, 'detail', () => {});
    expect(mapped.status).toBe(422);
    expect(mapped.body.detail).toMatch(/^a\.b: /);
    expect(mapError(new MalformedJson('Unexpected token'), 'detail', () => {}).status).toBe(400);
  });

  it('unwraps a workflow failure caused by a client error in an activity', () => {
    const app = ApplicationFailure.create({
      type: 'PlatformError',
      message: 'Unsupported file type: text/plain',
      nonRetryable: true,
      details: [{ status: 400, field: 'file' }],
    });
    const activity = new ActivityFailure(
      'Activity task failed',
      'processStoredImage',
      '1',
      RetryState.NON_RETRYABLE_FAILURE,
      'worker',
      app,
    );
    const wf = new WorkflowFailedError('Workflow execution failed', activity, RetryState.NON_RETRYABLE_FAILURE);
    expect(mapError(wf, 'detail', () => {})).toMatchObject({
      status: 400,
      body: { detail: 'Unsupported file type: text/plain' },
    });
  });

  it('hides an unexpected workflow failure behind a 500', () => {
    const log = vi.fn();
    const app = ApplicationFailure.create({ type: 'Error', message: 'ECONNREFUSED 10.0.0.3:9000' });
    const wf = new WorkflowFailedError('Workflow execution failed', app, RetryState.MAXIMUM_ATTEMPTS_REACHED);
    expect(mapError(wf, 'detail', log)).toMatchObject({ status: 500, body: { detail: 'Internal server error' } });
    expect(log).toHaveBeenCalled();
  });
});

describe('RateLimiter', () => {
  it('allows the budget per minute, then 429 with a Retry-After within the window', () => {
    vi.useFakeTimers();
    vi.setSystemTime(new Date('2026-01-01T00:00:00Z'));
    const limiter = new RateLimiter(3);
    for (let i = 0; i < 3; i += 1) limiter.take('k');
    let caught: PlatformError | undefined;
    vi.setSystemTime(new Date('2026-01-01T00:00:20Z'));
    try {
      limiter.take('k');
    } catch (e) {
      caught = e as PlatformError;
    }
    expect(caught?.status).toBe(429);
    expect(caught?.headers).toEqual({ 'Retry-After': '40' });
    limiter.take('other');
    vi.setSystemTime(new Date('2026-01-01T00:01:00Z'));
    expect(() => limiter.take('k')).not.toThrow();
    vi.useRealTimers();
  });

  it('is off with 0, and a per-key limit applies even then', () => {
    const off = new RateLimiter(0);
    for (let i = 0; i < 1000; i += 1) off.take('k');
    off.take('k2', 1);
    expect(() => off.take('k2', 1)).toThrow(PlatformError);
  });
});
