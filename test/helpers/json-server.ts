/**
 * A local JSON HTTP server for tests that stand in for a paid provider's API: each request's body
 * is read and parsed before `handle` runs, and `send` answers with a JSON body.
 */
import http from 'node:http';

export interface JsonRequest {
  req: http.IncomingMessage;
  /** the request's URL (path and query) */
  url: URL;
  /** the parsed JSON body, {} when empty */
  body: any;
  send: (status: number, body: unknown) => void;
  /** the raw response, for a test that holds an answer back */
  res: http.ServerResponse;
}

export function jsonServer(handle: (r: JsonRequest) => void): http.Server {
  return http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      const send = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      handle({ req, url: new URL(req.url!, 'http://mock'), body: raw ? JSON.parse(raw) : {}, send, res });
    });
  });
}
