import { describe, expect, it } from 'vitest';
import { judgedBytes } from '../src/receiving/parse-received.js';

const head = 'From: Ana <ana@sender.test>\r\nTo: support@in.acme.test\r\nSubject: Hi\r\n';
const body = 'Hello\r\nDKIM-Signature: v=1; not a header, a line of the body\r\n';

describe('judgedBytes: what mailauth reads of a received message', () => {
  it('is the header block alone when no header signs the body', () => {
    expect(judgedBytes(Buffer.from(`${head}\r\n${body}`)).toString()).toBe(`${head}\r\n`);
    const lf = `${head.replaceAll('\r\n', '\n')}\n${body}`;
    expect(judgedBytes(Buffer.from(lf)).toString()).toBe(`${head.replaceAll('\r\n', '\n')}\n`);
  });

  it('is the whole message when DKIM or ARC signs it, or when it has no body', () => {
    for (const signed of [
      'DKIM-Signature: v=1; a=rsa-sha256; d=sender.test;\r\n\tbh=x; b=y\r\n',
      'dkim-signature : v=1\r\n',
      'ARC-Seal: i=1; a=rsa-sha256; cv=none\r\n',
      'ARC-Message-Signature: i=1; a=rsa-sha256\r\n',
    ]) {
      const whole = Buffer.from(`${signed}${head}\r\n${body}`);
      expect(judgedBytes(whole)).toBe(whole);
    }
    const headersOnly = Buffer.from(head);
    expect(judgedBytes(headersOnly)).toBe(headersOnly);
  });
});
