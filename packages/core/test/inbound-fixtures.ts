import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The values a fixture's placeholders are replaced with. */
export interface FixtureValues {
  returnPath: string;
  recipient: string;
  messageId: string;
}

/** The bytes of `fixtures/inbound/<name>.eml` with its placeholders filled in, CRLF line ends. */
export function inboundFixture(name: string, values: FixtureValues): Buffer {
  const path = fileURLToPath(new URL(`./fixtures/inbound/${name}.eml`, import.meta.url));
  const text = readFileSync(path, 'utf8')
    .replaceAll('{{RETURN_PATH}}', values.returnPath)
    .replaceAll('{{RECIPIENT}}', values.recipient)
    .replaceAll('{{MESSAGE_ID}}', values.messageId)
    .replace(/\r?\n/g, '\r\n');
  return Buffer.from(text, 'utf8');
}
