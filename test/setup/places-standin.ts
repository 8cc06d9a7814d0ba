/**
 * A local stand-in for Google Places API (New) `places:searchText`, used because the tests have
 * no internet. It answers the way the documented API does for the fields the platform reads and
 * counts requests (`GET /__count`) so tests can see the cache working.
 */
import http from 'node:http';

import { freePort } from '../../tools/infra.ts';

export const PLACES_TEST_KEY = 'test-places-key';

export async function startPlacesStandin(): Promise<{ url: string; close(): Promise<void> }> {
  let count = 0;
  const server = http.createServer((req, res) => {
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.method === 'GET' && req.url === '/__count') return send(200, { count });
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/places:searchText')
        return send(404, { error: { code: 404, message: 'not found' } });
      count += 1;
      if (req.headers['x-goog-api-key'] !== PLACES_TEST_KEY)
        return send(403, { error: { code: 403, message: 'API key not valid', status: 'PERMISSION_DENIED' } });
      if (!String(req.headers['x-goog-fieldmask'] ?? '').includes('places.displayName'))
        return send(400, { error: { code: 400, message: 'FieldMask is a required parameter' } });
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      const query = String(body.textQuery ?? '');
      if (query.includes('Broken')) return send(500, { error: { code: 500, message: 'backend error' } });
      if (query.includes('Nowhere')) return send(200, {});
      const center = body.locationBias?.circle?.center ?? {};
      const [name, ...rest] = query.split(', ');
      send(200, {
        places: [
          {
            id: `ChIJ${Buffer.from(query).toString('base64url').slice(0, 20)}`,
            displayName: { text: name, languageCode: 'en' },
            formattedAddress: rest.join(', '),
            location: { latitude: center.latitude, longitude: center.longitude },
            rating: 4.4,
            userRatingCount: 128,
            nationalPhoneNumber: '(555) 010-0000',
            websiteUri: 'https://example.com/store',
            googleMapsUri: 'https://maps.google.com/?cid=1',
            regularOpeningHours: { weekdayDescriptions: ['Monday: 8:00 AM – 9:00 PM'] },
            primaryType: 'grocery_store',
          },
        ],
      });
    });
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise<void>((r) => server.close(() => r())) };
}
