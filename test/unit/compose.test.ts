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
const unquote = (v: string) =>
  v
    .trim()
    .replace(/^"(.*)"$/, '$1')
    .replace(/^'(.*)'$/, '$1');

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

interface Service {
  image?: string;
  /** its environment with the anchors it merges (`<<: [*a, *b]`) resolved */
  environment: Map<string, string>;
  volumes: string[];
  /** service → condition */
  dependsOn: Map<string, string>;
}

/** The `x-…: &name` blocks of `NAME: value` lines, by anchor name. */
function anchors(): Map<string, Map<string, string>> {
  const out = new Map<string, Map<string, string>>();
  let current: Map<string, string> | undefined;
  for (const l of lines) {
    const depth = indent(l);
    const opened = /^x-[\w-]+:\s*&([\w-]+)\s*$/.exec(l);
    if (opened) out.set(opened[1], (current = new Map()));
    else if (depth === 0) current = undefined;
    else if (current && depth === 2) {
      const m = /^\s+([A-Z][A-Z0-9_]*):\s*(.*)$/.exec(l);
      if (m) current.set(m[1], unquote(m[2]));
    }
  }
  return out;
}

/** Each service's image, resolved environment, volumes and dependencies (the file's block style only). */
function services(): Map<string, Service> {
  const named = anchors();
  const merge = (into: Map<string, string>, refs: string) => {
    for (const ref of refs.replace(/[[\]\s]/g, '').split(',')) {
      const from = named.get(ref.replace(/^\*/, ''));
      expect(from, `anchor ${ref}`).toBeDefined();
      for (const [k, v] of from!) into.set(k, v);
    }
  };
  const out = new Map<string, Service>();
  let inServices = false;
  let service: Service | undefined;
  let block = '';
  let dependency = '';
  for (const l of lines) {
    const depth = indent(l);
    const t = l.trim();
    if (depth === 0) inServices = l.startsWith('services:');
    if (!inServices || depth === 0) continue;
    if (depth === 2) {
      service = { environment: new Map(), volumes: [], dependsOn: new Map() };
      out.set(t.replace(/:$/, ''), service);
      block = '';
    } else if (depth === 4 && service) {
      const [key, ...rest] = t.split(':');
      const value = rest.join(':').trim();
      block = key;
      if (key === 'image') service.image = unquote(value);
      if (key === 'environment' && value.startsWith('*')) merge(service.environment, value);
    } else if (service && block === 'environment' && depth === 6) {
      const m = /^([A-Z][A-Z0-9_]*|<<):\s*(.*)$/.exec(t);
      if (m?.[1] === '<<') merge(service.environment, m[2]);
      else if (m) service.environment.set(m[1], unquote(m[2]));
    } else if (service && block === 'volumes' && t.startsWith('- ')) service.volumes.push(unquote(t.slice(2)));
    else if (service && block === 'depends_on') {
      if (depth === 6) dependency = t.replace(/:$/, '');
      else if (depth === 8 && t.startsWith('condition:'))
        service.dependsOn.set(dependency, t.slice('condition:'.length).trim());
    }
  }
  return out;
}

/** The variables a value takes from the environment: `${NAME…}` → NAME. */
const variables = (value: string | undefined) => [...(value ?? '').matchAll(/\$\{([A-Z0-9_]+)/g)].map((m) => m[1]);

/** every `NAME: value` line (environment entries included, wherever they sit) */
const settings = () =>
  lines.flatMap((l) => {
    const m = /^\s+([A-Z][A-Z0-9_]*):\s*(.*)$/.exec(l);
    return m ? [{ name: m[1], value: unquote(m[2]) }] : [];
  });

const SECRET = /PASSWORD|PWD|SECRET|_KEY$|ACCESS_KEY|ROOT_USER|USERNAME|TOKEN/;
/** the credentials of the services compose itself runs: no way to start without them */
const REQUIRED = [
  'MINIO_ACCESS_KEY',
  'MINIO_SECRET_KEY',
  'MINIO_ROOT_USER',
  'MINIO_ROOT_PASSWORD',
  'POSTGRES_PASSWORD',
  'POSTGRES_PWD',
  'MONGO_INITDB_ROOT_USERNAME',
  'MONGO_INITDB_ROOT_PASSWORD',
  'CONFIG_ENCRYPTION_KEY',
  'MONGO_ROOT_PASSWORD',
  'MONGO_PLATFORM_PASSWORD',
];

describe('docker-compose.yml', () => {
  it('publishes only the edge beyond the loopback interface', () => {
    const ports = publishedPorts();
    expect(ports.get('edge')).toEqual(['8000:8000']);
    expect([...ports.keys()]).toEqual(
      expect.arrayContaining(['temporal', 'temporal-ui', 'minio', 'mongodb', 'postgresql', 'worker']),
    );
    for (const [service, entries] of ports) {
      if (service === 'edge') continue;
      for (const entry of entries)
        expect(entry, `${service} publishes ${entry}`).toMatch(/^(127\.0\.0\.1|\[::1\]):\d+:\d+$/);
    }
    expect(body).not.toMatch(/network_mode:\s*"?host/);
  });

  it('takes every secret from the environment: required ones with ${VAR:?…}, none with a default value', () => {
    const all = settings();
    const secrets = all.filter((s) => SECRET.test(s.name));
    for (const name of REQUIRED)
      expect(
        secrets.map((s) => s.name),
        name,
      ).toContain(name);
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

  it("gives the worker, which parses untrusted files, no admin key, payment secret or metrics token, and not the edge's /data", () => {
    const all = services();
    const worker = all.get('worker')!;
    const edge = all.get('edge')!;
    for (const name of ['PLATFORM_ADMIN_KEY', 'PAYMENT_WEBHOOK_SECRET', 'STRIPE_SECRET_KEY', 'METRICS_TOKEN']) {
      expect(worker.environment.has(name), `the worker gets ${name}`).toBe(false);
      expect(edge.environment.has(name), `the edge gets ${name}`).toBe(true);
    }
    // The gift provider's credentials are the worker's (it fulfils redemptions), not the edge's.
    expect(worker.environment.has('GIFT_PROVIDER_CLIENT_SECRET')).toBe(true);
    expect(edge.environment.has('GIFT_PROVIDER_CLIENT_SECRET')).toBe(false);
    // The configuration key comes from the environment, the same for both, never from a shared file.
    for (const p of [worker, edge])
      expect(p.environment.get('CONFIG_ENCRYPTION_KEY')).toMatch(/^\$\{CONFIG_ENCRYPTION_KEY:\?[^}]+\}$/);
    // The edge's data volume (its generated admin-key.txt) is mounted by the edge alone.
    const volumeOf = (p: Service) => p.volumes.map((v) => v.split(':')[0]);
    const edgeData = volumeOf(edge).find((v) => edge.volumes.some((m) => m === `${v}:/data`));
    expect(edgeData).toBeDefined();
    for (const [name, p] of all) if (name !== 'edge') expect(volumeOf(p), name).not.toContain(edgeData);
  });

  it('connects the platform to MongoDB and MinIO as their own least-privilege users, created by one-shot services; root credentials stay with the stores', () => {
    const all = services();
    const edge = all.get('edge')!;
    const worker = all.get('worker')!;
    const mongoRoot = [
      ...variables(all.get('mongodb')!.environment.get('MONGO_INITDB_ROOT_USERNAME')),
      ...variables(all.get('mongodb')!.environment.get('MONGO_INITDB_ROOT_PASSWORD')),
    ];
    const minioRoot = [
      ...variables(all.get('minio')!.environment.get('MINIO_ROOT_USER')),
      ...variables(all.get('minio')!.environment.get('MINIO_ROOT_PASSWORD')),
    ];
    expect(mongoRoot).toHaveLength(2);
    expect(minioRoot).toHaveLength(2);
    for (const p of [edge, worker]) {
      const uri = p.environment.get('MONGODB_URI')!;
      const userinfo = variables(/:\/\/([^@]+)@/.exec(uri)?.[1]);
      expect(userinfo).toHaveLength(2);
      for (const v of userinfo) expect(mongoRoot, `MONGODB_URI uses ${v}`).not.toContain(v);
      expect(uri).toMatch(/@mongodb:27017\/platform\?authSource=platform$/);
      for (const name of ['MINIO_ACCESS_KEY', 'MINIO_SECRET_KEY']) {
        for (const v of variables(p.environment.get(name))) expect(minioRoot, `${name} uses ${v}`).not.toContain(v);
      }
      expect(p.dependsOn.get('mongodb-init')).toBe('service_completed_successfully');
      expect(p.dependsOn.get('minio-init')).toBe('service_completed_successfully');
    }
    // Only the stores and their one-shot init services see a root credential.
    for (const [name, p] of all) {
      const used = [...p.environment.values()].flatMap(variables);
      const roots = used.filter((v) => mongoRoot.includes(v) || minioRoot.includes(v));
      if (roots.length)
        expect(['mongodb', 'mongodb-init', 'minio', 'minio-init'], `${name} gets ${roots.join(', ')}`).toContain(name);
    }
    // What the init services grant: readWrite on the platform database; the platform's bucket.
    const mongoInit = fs.readFileSync(new URL('../../docker/mongodb-init.js', import.meta.url), 'utf8');
    expect(mongoInit).toContain("const roles = [{ role: 'readWrite', db: 'platform' }];");
    expect(mongoInit.match(/role:/g)).toHaveLength(1);
    const policy = JSON.parse(
      fs.readFileSync(new URL('../../docker/minio-platform-policy.json', import.meta.url), 'utf8'),
    ) as { Statement: { Effect: string; Action: string[]; Resource: string[] }[] };
    for (const st of policy.Statement) {
      expect(st.Effect).toBe('Allow');
      for (const r of st.Resource) expect(r).toMatch(/^arn:aws:s3:::@BUCKET@(\/\*)?$/);
      for (const a of st.Action) expect(a).not.toMatch(/\*|Admin|Policy|DeleteBucket|CreateBucket/);
    }
    expect(all.get('minio-init')!.environment.get('MINIO_BUCKET')).toBe(edge.environment.get('MINIO_BUCKET'));
  });

  it('pins every image: a version down to its minor one or a digest, never latest (compose and the Dockerfile)', () => {
    const images = [...services()].filter(([, p]) => p.image).map(([name, p]) => [name, p.image!] as const);
    expect(images.length).toBeGreaterThanOrEqual(5);
    const dockerfile = fs.readFileSync(new URL('../../Dockerfile', import.meta.url), 'utf8');
    const args = new Map([...dockerfile.matchAll(/^ARG ([A-Z_]+)=(\S+)$/gm)].map((m) => [m[1], m[2]]));
    const bases = [...dockerfile.matchAll(/^FROM (\S+)/gm)].map(
      (m, i) =>
        [`Dockerfile stage ${i + 1}`, m[1].replace(/^\$\{(\w+)\}$/, (_, k: string) => args.get(k) ?? k)] as const,
    );
    expect(bases).toHaveLength(4);
    for (const [where, image] of [...images, ...bases]) {
      const [ref, digest] = image.split('@');
      const tag = ref.includes(':') ? ref.slice(ref.lastIndexOf(':') + 1) : '';
      expect(tag, `${where}: ${image}`).not.toMatch(/latest/i);
      if (digest) expect(digest, `${where}: ${image}`).toMatch(/^sha256:[0-9a-f]{64}$/);
      else expect(tag, `${where}: ${image}`).toMatch(/\d+\.\d+|^RELEASE\.\d{4}-/);
    }
  });

  it('names every required variable in .env.example', () => {
    const example = fs.readFileSync(new URL('../../.env.example', import.meta.url), 'utf8');
    const required = new Set([...body.matchAll(/\$\{([A-Z0-9_]+):\?/g)].map((m) => m[1]));
    expect(required.size).toBeGreaterThan(0);
    for (const name of required) expect(example, name).toMatch(new RegExp(`^${name}=`, 'm'));
  });
});
