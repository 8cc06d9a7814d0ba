/**
 * docker-compose.yml exposes only the edge and carries no secret of its own. Read line by line
 * (the file is plain block YAML; no YAML parser is a dependency of the project).
 */
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';

const text = fs.readFileSync(new URL('../../docker-compose.yml', import.meta.url), 'utf8');
const lines = text.split('\n').filter((l) => l.trim() && !l.trim().startsWith('#'));
const body = lines.join('\n');
const indent = (l: string) => l.length - l.trimStart().length;
const unquote = (v: string) => v.trim().replace(/^"(.*)"$/, '$1').replace(/^'(.*)'$/, '$1');

/** service name → its `ports:` entries */
function publishedPorts(): Map<string, string[]> {
  const out = new Map<string, string[]>();
  let inServices = false;
  let service = '';
  let inPorts = false;
  for (const l of lines) {
    const depth = indent(l);
    if (depth === 0) inServices = l.startsWith('services:');
    if (!inServices) continue;
    if (depth === 2) {
      service = l.trim().replace(/:$/, '');
      out.set(service, []);
      inPorts = false;
    } else if (depth === 4) inPorts = l.trim() === 'ports:';
    else if (inPorts && depth > 4 && l.trim().startsWith('- ')) out.get(service)!.push(unquote(l.trim().slice(2)));
  }
  return out;
}

/** every `NAME: value` line (environment entries included, wherever they sit) */
const settings = () =>
  lines.flatMap((l) => {
    const m = /^\s+([A-Z][A-Z0-9_]*):\s*(.*)$/.exec(l);
    return m ? [{ name: m[1], value: unquote(m[2]) }] : [];
  });

const SECRET = /PASSWORD|PWD|SECRET|_KEY$|ACCESS_KEY|ROOT_USER|USERNAME|TOKEN/;
/** the credentials of the services compose itself runs: no way to start without them */
const REQUIRED = ['MINIO_ACCESS_KEY', 'MINIO_SECRET_KEY', 'MINIO_ROOT_USER', 'MINIO_ROOT_PASSWORD', 'POSTGRES_PASSWORD', 'POSTGRES_PWD', 'MONGO_INITDB_ROOT_USERNAME', 'MONGO_INITDB_ROOT_PASSWORD'];

describe('docker-compose.yml', () => {
  it('publishes only the edge beyond the loopback interface', () => {
    const ports = publishedPorts();
    expect(ports.get('edge')).toEqual(['8000:8000']);
    expect([...ports.keys()]).toEqual(expect.arrayContaining(['temporal', 'temporal-ui', 'minio', 'mongodb', 'postgresql', 'worker']));
    for (const [service, entries] of ports) {
      if (service === 'edge') continue;
      for (const entry of entries) expect(entry, `${service} publishes ${entry}`).toMatch(/^(127\.0\.0\.1|\[::1\]):\d+:\d+$/);
    }
    expect(body).not.toMatch(/network_mode:\s*"?host/);
  });

  it('takes every secret from the environment: required ones with ${VAR:?…}, none with a default value', () => {
    const all = settings();
    const secrets = all.filter((s) => SECRET.test(s.name));
    for (const name of REQUIRED) expect(secrets.map((s) => s.name), name).toContain(name);
    for (const { name, value } of secrets) {
      if (REQUIRED.includes(name)) expect(value, name).toMatch(/^\$\{[A-Z0-9_]+:\?[^}]+\}$/);
      // optional ones (a feature stays off without them) may be empty, never a known value
      else expect(value, name).toMatch(/^\$\{[A-Z0-9_]+(:\?[^}]+|:-)\}$/);
    }
    // credentials inside URIs come from the environment too
    for (const { name, value } of all) {
      const userinfo = /:\/\/([^@/]+)@/.exec(value)?.[1];
      if (userinfo) expect(userinfo, name).toMatch(/^\$\{[A-Z0-9_]+:\?[^}]+\}:\$\{[A-Z0-9_]+:\?[^}]+\}$/);
    }
  });

  it('lets the worker service scale (--scale worker=N): no container name, no published port', () => {
    expect(publishedPorts().get('worker')).toEqual([]);
    const worker = text.slice(text.indexOf('\n  worker:\n'), text.indexOf('\n  edge:\n'));
    expect(worker).toContain('dist/workers/worker.js');
    expect(worker).not.toMatch(/container_name|hostname:/);
  });

  it('names every required variable in .env.example', () => {
    const example = fs.readFileSync(new URL('../../.env.example', import.meta.url), 'utf8');
    const required = new Set([...body.matchAll(/\$\{([A-Z0-9_]+):\?/g)].map((m) => m[1]));
    expect(required.size).toBeGreaterThan(0);
    for (const name of required) expect(example, name).toMatch(new RegExp(`^${name}=`, 'm'));
  });
});
