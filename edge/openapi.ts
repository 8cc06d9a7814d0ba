/** OpenAPI 3.1 generated from the same route definitions and zod schemas the handlers use. */
import { z } from 'zod';
import { routes, type RouteDef } from './http';

type Json = Record<string, unknown>;

const schemaOf = (schema: z.ZodType, io: 'input' | 'output'): Json => {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Json;
  return rest;
};

const ERROR_DETAIL = { type: 'object', properties: { detail: { type: 'string' } }, required: ['detail'] };
const ERROR_SUCCESS = {
  type: 'object',
  properties: { success: { const: false }, error: { type: 'string' } },
  required: ['success', 'error'],
};

function parametersOf(def: RouteDef): Json[] {
  const out: Json[] = [];
  for (const [where, schema] of [['path', def.params], ['query', def.query]] as const) {
    if (!schema) continue;
    const json = schemaOf(schema as z.ZodType, 'input') as { properties?: Record<string, Json>; required?: string[] };
    for (const [name, prop] of Object.entries(json.properties ?? {})) {
      out.push({ name, in: where, required: where === 'path' || (json.required ?? []).includes(name), schema: prop, ...(prop.description ? { description: prop.description } : {}) });
    }
  }
  return out;
}

function operationOf(def: RouteDef): Json {
  const errorBody = def.errors === 'success' ? ERROR_SUCCESS : ERROR_DETAIL;
  const err = (description: string) => ({ description, content: { 'application/json': { schema: errorBody } } });
  const op: Json = {
    tags: [def.tag],
    summary: def.summary,
    operationId: `${def.method.toLowerCase()}${def.paths[0].replace(/[^A-Za-z0-9]+/g, '_')}`,
    parameters: parametersOf(def),
    responses: {
      [String(def.status ?? 200)]: def.produces
        ? { description: 'OK', content: { [def.produces.split(';')[0]]: { schema: { type: 'string', format: 'binary' } } } }
        : { description: 'OK', content: { 'application/json': { schema: def.response ? schemaOf(def.response, 'output') : {} } } },
      ...(def.body || def.form || def.query || def.params ? { '400': err('Malformed request'), '422': err('Invalid input; the message names the field') } : {}),
      ...(def.auth !== 'none' ? { '401': err('Missing, unknown or revoked API key'), '403': err('The key lacks the permission or organization'), '429': err('Rate limited; see Retry-After') } : {}),
      ...(def.form ? { '413': err('Upload over MAX_UPLOAD_MB') } : {}),
      '500': err('Server error (never carries a stack trace)'),
    },
  };
  if (def.auth !== 'none') op.security = [{ bearer: [] }, { apiKey: [] }];
  if (def.auth === 'admin' || def.auth === 'sysadmin') op.description = `Requires the ${def.auth === 'admin' ? 'admin' : 'system_admin'} permission.`;
  if (def.body) op.requestBody = { required: true, content: { 'application/json': { schema: schemaOf(def.body, 'input') } } };
  if (def.form) {
    const fields = schemaOf(def.form.fields, 'input') as { properties?: Json; required?: string[] };
    op.requestBody = {
      required: true,
      content: {
        'multipart/form-data': {
          schema: {
            type: 'object',
            properties: { file: { type: 'string', format: 'binary' }, ...(fields.properties ?? {}) },
            required: [...(def.form.file ? ['file'] : []), ...(fields.required ?? [])],
          },
        },
      },
    };
  }
  return op;
}

let cached: Json | undefined;

export function openApiDocument(): Json {
  if (cached) return cached;
  const paths: Record<string, Json> = {};
  for (const def of routes) {
    for (const path of def.paths) {
      const openPath = path.replace(/:([A-Za-z_]+)/g, '{$1}');
      paths[openPath] ??= {};
      paths[openPath][def.method.toLowerCase()] = path === def.paths[0] ? operationOf(def) : { ...operationOf(def), operationId: `${operationOf(def).operationId}_alias${def.paths.indexOf(path)}`, description: `Alias of ${def.paths[0]}.` };
    }
  }
  cached = {
    openapi: '3.1.0',
    info: {
      title: 'Loyalty & assistant platform',
      version: '0.1.0',
      description: 'HTTP edge of the platform. Authenticate with `Authorization: Bearer <key>` or `X-API-Key: <key>`.',
    },
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer' },
        apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
      },
    },
    paths,
  };
  return cached;
}

/** A self-contained page (no CDN: the platform runs offline) that renders /openapi.json. */
export function docsPage(): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Platform API</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font:14px/1.45 system-ui,sans-serif;margin:0;color:#1d2330;background:#f6f7f9}
header{background:#1d2330;color:#fff;padding:16px 24px}header h1{margin:0;font-size:20px}
main{max-width:1100px;margin:0 auto;padding:16px 24px}h2{margin-top:28px;border-bottom:1px solid #d5d9e0;text-transform:capitalize}
details{background:#fff;border:1px solid #d5d9e0;border-radius:6px;margin:8px 0}summary{cursor:pointer;padding:8px 12px;display:flex;gap:12px;align-items:center}
.m{font-weight:700;min-width:64px;text-align:center;border-radius:4px;color:#fff;padding:2px 6px;font-size:12px}
.get{background:#2f7d32}.post{background:#1f5fbf}.put{background:#a66a00}.patch{background:#6b4fbf}.delete{background:#b3261e}
.p{font-family:ui-monospace,monospace}.s{color:#555}pre{background:#f0f2f5;padding:8px;overflow:auto;margin:0 12px 12px;border-radius:4px}
.k{margin:0 12px;font-weight:600}
</style></head><body><header><h1>Platform API</h1><div id="d"></div></header><main id="app">Loading /openapi.json…</main>
<script>
fetch('openapi.json').then(r=>r.json()).then(doc=>{
  document.getElementById('d').textContent=doc.info.description;
  const byTag={};
  for(const [path,ops] of Object.entries(doc.paths))for(const [method,op] of Object.entries(ops))(byTag[op.tags[0]]??=[]).push({path,method,op});
  const app=document.getElementById('app');app.textContent='';
  const esc=s=>String(s).replace(/[&<>]/g,c=>({'&':'&amp;','<':'&lt;','>':'&gt;'}[c]));
  for(const [tag,list] of Object.entries(byTag)){
    const h=document.createElement('h2');h.textContent=tag;app.appendChild(h);
    for(const {path,method,op} of list){
      const d=document.createElement('details');
      let html='<summary><span class="m '+method+'">'+method.toUpperCase()+'</span><span class="p">'+esc(path)+'</span><span class="s">'+esc(op.summary||'')+'</span></summary>';
      if(op.description)html+='<p class="k">'+esc(op.description)+'</p>';
      if(op.parameters&&op.parameters.length)html+='<p class="k">Parameters</p><pre>'+esc(JSON.stringify(op.parameters,null,2))+'</pre>';
      if(op.requestBody)html+='<p class="k">Request body</p><pre>'+esc(JSON.stringify(op.requestBody.content,null,2))+'</pre>';
      html+='<p class="k">Responses</p><pre>'+esc(JSON.stringify(op.responses,null,2))+'</pre>';
      d.innerHTML=html;app.appendChild(d);
    }
  }
}).catch(e=>{document.getElementById('app').textContent='Could not load openapi.json: '+e});
</script></body></html>`;
}
