/** The API reference: the OpenAPI document and the page that renders it. */
import { defineRoute } from '../http';
import { docsPage, openApiDocument } from '../openapi';

defineRoute({
  method: 'GET',
  paths: ['/openapi.json'],
  tag: 'system',
  summary: 'OpenAPI 3.1 document generated from the zod schemas the handlers use',
  auth: 'none',
  handler: () => openApiDocument(),
});

defineRoute({
  method: 'GET',
  paths: ['/docs'],
  tag: 'system',
  summary: 'Browsable API documentation',
  auth: 'none',
  produces: 'text/html; charset=utf-8',
  handler: () => docsPage(),
});
