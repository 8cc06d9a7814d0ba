/** Without SMTP_URL each message is written to DATA_DIR/outbox as a real .eml file. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import PostalMime from 'postal-mime';
import { describe, expect, it } from 'vitest';

import { deliver } from '../../activities/adapters/mail.ts';
import { parseEnv, setConfig } from '../../activities/core/config.ts';

describe('file mail transport', () => {
  it('writes a parseable .eml with both parts under DATA_DIR/outbox', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'outbox-test-'));
    setConfig(parseEnv({ DATA_DIR: dataDir, EMAIL_FROM: 'Platform <no-reply@example.com>' }));
    const out = await deliver({
      to: 'ana@example.com',
      subject: 'Hola',
      text: 'plain part',
      html: '<p>html part</p>',
      messageId: '<abc@test.platform>',
    });
    expect(out.transport).toBe('file');
    expect(path.dirname(out.location)).toBe(path.join(dataDir, 'outbox'));
    const mail = await PostalMime.parse(fs.readFileSync(out.location));
    expect(mail).toMatchObject({ subject: 'Hola', messageId: '<abc@test.platform>', text: 'plain part\n' });
    expect(mail.html).toContain('html part');
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
});
