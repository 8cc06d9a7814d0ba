/** The prose of the OpenAPI document (Markdown, rendered by the reference page at /docs). */

export const API_DESCRIPTION = `The HTTP interface of the loyalty and assistant platform: every operation below is served by this
edge and can be tried from this page against it.

### Authenticate

Every operation needs an API key except the **system** ones, \`POST /verify_api_key\`,
\`GET /referral/{code}\` and the payment provider's webhook.

1. Click **Authorize** and paste the key (\`pk_…\`) into **bearer** (sent as
   \`Authorization: Bearer <key>\`) or **apiKey** (sent as \`X-API-Key: <key>\`); one is enough.
2. Open an operation, **Try it out**, fill in the fields, **Execute**. The answer, its status and
   the time it took appear below, with the equivalent \`curl\` command.

The key stays in this browser (local storage) until **Logout** in the same dialog. \`npm start\`
writes a \`system_admin\` key of the default organization to \`DATA_DIR/admin-key.txt\`; create
the keys of your users with \`POST /generate_api_key\`.

A key acts within its organization: \`basic\` for its own user only, \`admin\` for any user of its
organization, \`system_admin\` everywhere. Operations that need more than \`basic\` say so.
\`organization_id\` defaults to the key's organization wherever it is accepted.

### Errors

Most routes answer an error as \`{"detail": "…"}\` (**ErrorDetail**); gifts and text processing
as \`{"success": false, "error": "…"}\` (**ErrorSuccess**, and invalid input is 400 there).

| status | meaning |
|---|---|
| 400 | malformed JSON or multipart body |
| 401 | missing, unknown, revoked or expired key |
| 403 | the key lacks the permission or the organization (the message names what) |
| 404 | not found, or not visible to this key |
| 409 | conflicts with the current state (an ended session, …) |
| 413 / 415 | upload too large / not multipart where a file is expected |
| 422 | invalid input; the message starts with the field: \`user_id: …\` |
| 429 | rate limited per key (per address for \`verify_api_key\`); wait \`Retry-After\` seconds |
| 5xx | a fixed text per status to basic keys; admin keys also get the platform's own words for a failure it names (\`payment provider not configured\`), never internal detail |

### Concepts

The project's repository explains the rest:

- \`docs/api-conventions.md\`: keys, organizations and users, key levels and the permissions of
  each component, error shapes and status codes, pagination, idempotency, request ids, rate limits.
- \`docs/decisions.md\`: defaults, shapes and values clients rely on, and the operations beyond
  the interface the platform serves.
- \`docs/durable-processes.md\`: the workflows behind uploads, scans, referrals, payments and
  scheduled events, their ids and retries.
- \`README.md\`: running the platform and a curl tour; \`docs/components/\`: one page per component
  (images, documents, scheduler, retail, ticket scans, support, billing, loyalty, gifts, …).`;

export const TAG_DESCRIPTIONS: Record<string, string> = {
  system: 'Health of the platform, this document and the reference page; no key needed.',
  session: 'Sessions, conversations and API keys (also served under `/api/session-service`).',
  identity: "Organizations and their users (`idp_id` is the identity provider's id, `usr_…` the platform's).",
  images: 'Image analysis and HEIC conversion: uploads that start a workflow.',
  text: 'Text processing and similarity. Errors are `{success:false, error}`.',
  responses: "The assistant's stored answers of a conversation.",
  files: 'Signed, expiring links to stored uploads: made with a key, opened without one (docs/components/files.md).',
  documents: 'Document classification into folders, and thumbnails.',
  email: 'Mail to a user of the organization (the address on record only, for a basic key).',
  scheduler:
    'Scheduled events, each run by a Temporal Schedule. Two interface variants share one event store: `/scheduler/events` and `/api/scheduler-service/events`.',
  retail: "The organization's catalogue of brands, products and venues (admins write), and receipt scans.",
  'ticket scan': 'Ticket scans: upload, status, admin validation of uncertain products, image and thumbnail.',
  support: 'Support answers from the knowledge base, the knowledge base itself, and audio transcription.',
  feedback: 'User feedback and its statistics.',
  'search history': "Search across the organization's catalogue and the user's texts, and the user's search history.",
  billing: "Token packages, purchases, usage and the payment provider's webhook.",
  'llm configuration': 'Model settings per organization and agent, and provider settings.',
  loyalty: 'Points balances and history, awards, rules and referrals.',
  gifts: 'Gift catalogue and redemption with points. Errors are `{success:false, error}`.',
  webhooks: 'Outgoing events: webhook endpoints (Standard Webhooks signatures), their deliveries and the event log.',
  audit:
    'The audit trail: every change made with an admin or system_admin key, hash-chained per organization, and its verification.',
  privacy: "A user's data handed back (an export zip) or erased on request (docs/privacy.md).",
};
