/**
 * The answer checks of test/helpers/contract.ts on a small document: objects closed (also when
 * built with allOf), required fields, statuses and content types, path templates.
 */
import { describe, expect, it } from 'vitest';

import { buildContract, check, closeObjects, operationFor, uncovered } from '../helpers/contract.ts';

const json = (schema: object) => ({ content: { 'application/json': { schema } } });
const doc = {
  openapi: '3.1.0',
  components: {
    schemas: {
      Thing: {
        type: 'object',
        properties: { id: { type: 'string' }, note: { type: ['string', 'null'] } },
        required: ['id'],
      },
      Open: { type: 'object', properties: { id: { type: 'string' } }, additionalProperties: {} },
      Both: {
        allOf: [{ $ref: '#/components/schemas/Thing' }, { type: 'object', properties: { extra: { type: 'integer' } } }],
      },
      Maybe: { anyOf: [{ $ref: '#/components/schemas/Thing' }, { type: 'null' }] },
      ErrorDetail: { type: 'object', properties: { detail: { type: 'string' } }, required: ['detail'] },
    },
  },
  paths: {
    '/things/{id}': {
      get: {
        operationId: 'getThing',
        responses: {
          '200': json({ $ref: '#/components/schemas/Thing' }),
          '404': json({ $ref: '#/components/schemas/ErrorDetail' }),
        },
      },
    },
    '/things/featured': {
      get: { operationId: 'getFeatured', responses: { '200': json({ $ref: '#/components/schemas/Open' }) } },
    },
    '/both': { get: { operationId: 'getBoth', responses: { '200': json({ $ref: '#/components/schemas/Both' }) } } },
    '/maybe': {
      get: {
        operationId: 'getMaybe',
        responses: {
          '200': json({
            type: 'object',
            properties: { thing: { $ref: '#/components/schemas/Maybe' } },
            required: ['thing'],
          }),
        },
      },
    },
    '/image': {
      get: {
        operationId: 'getImage',
        responses: { '200': { content: { 'image/png': { schema: { type: 'string', format: 'binary' } } } } },
      },
    },
  },
};
const c = buildContract(doc);
const answer = (status: number, body: unknown, contentType = 'application/json; charset=utf-8') => ({
  status,
  body,
  contentType,
});

describe('the contract check', () => {
  it('matches a concrete path to its operation, a fixed segment before a template, ignoring the query', () => {
    expect(operationFor(c, 'GET', '/things/featured?x=1')?.operationId).toBe('getFeatured');
    expect(operationFor(c, 'GET', '/things/abc')?.operationId).toBe('getThing');
    expect(operationFor(c, 'POST', '/things/abc')).toBeUndefined();
    expect(check(c, 'GET', '/nowhere', answer(404, {}))).toEqual({});
  });

  it('refuses an undocumented field and a missing required one, and accepts the documented answer', () => {
    expect(check(c, 'GET', '/things/a', answer(200, { id: 'a', note: null })).problems).toBeUndefined();
    expect(check(c, 'GET', '/things/a', answer(200, { id: 'a', _id: 'x' })).problems).toMatch(
      /must NOT have unevaluated properties \("_id"\)/,
    );
    expect(check(c, 'GET', '/things/a', answer(200, { note: 'n' })).problems).toMatch(
      /must have required property 'id'/,
    );
    expect(check(c, 'GET', '/things/featured', answer(200, { id: 'a', more: 1 })).problems).toBeUndefined(); // says it is open
  });

  it('closes an allOf where its parts meet, and each branch of an anyOf', () => {
    expect(check(c, 'GET', '/both', answer(200, { id: 'a', extra: 1 })).problems).toBeUndefined();
    expect(check(c, 'GET', '/both', answer(200, { id: 'a', extra: 1, other: 2 })).problems).toMatch(/"other"/);
    expect(check(c, 'GET', '/maybe', answer(200, { thing: null })).problems).toBeUndefined();
    expect(check(c, 'GET', '/maybe', answer(200, { thing: { id: 'a', other: 1 } })).problems).toMatch(/other/);
    const parts: any = { allOf: [{ type: 'object', properties: { a: {} } }] };
    closeObjects(parts);
    expect(parts.unevaluatedProperties).toBe(false);
    expect(parts.allOf[0].unevaluatedProperties).toBeUndefined();
  });

  it('refuses a status or a content type the operation does not document; a binary answer is checked by type only', () => {
    expect(check(c, 'GET', '/things/a', answer(409, { detail: 'x' }))).toMatchObject({
      kind: 'status',
      operationId: 'getThing',
    });
    expect(check(c, 'GET', '/things/a', answer(404, { detail: 'gone' })).problems).toBeUndefined();
    expect(check(c, 'GET', '/things/a', answer(200, 'hi', 'text/html')).kind).toBe('content-type');
    expect(check(c, 'GET', '/image', answer(200, Buffer.from('x'), 'image/png')).problems).toBeUndefined();
    expect(check(c, 'GET', '/image', answer(200, {}, 'application/json')).kind).toBe('content-type');
  });

  it('lists the operations whose success answer was never seen', () => {
    expect(
      uncovered(doc, [
        { operationId: 'getThing', status: 404 },
        { operationId: 'getBoth', status: 200 },
      ]),
    ).toEqual([
      'getThing (GET /things/{id})',
      'getFeatured (GET /things/featured)',
      'getMaybe (GET /maybe)',
      'getImage (GET /image)',
    ]);
  });
});
