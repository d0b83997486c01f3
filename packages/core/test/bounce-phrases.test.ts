import { describe, expect, it } from 'vitest';
import type { BounceReason, ReasonGroup } from '../src/inbound/bounce-reasons.js';
import { classifyReason, type ReasonInput } from '../src/inbound/classify-reason.js';
import type { SmtpCommand } from '../src/inbound/inbound-report.js';
import { compilePhrases } from '../src/inbound/phrases/phrase-table.js';

/**
 * One test per family of phrases (src/inbound/phrases/), with replies shaped as real servers write them:
 * the wordings their documentation or their users quote. Each row: the status of the report (or null),
 * the reply, the refused command (or null), and the reason and group expected.
 */
type Row = [status: string | null, diagnostic: string, command: SmtpCommand | null, reason: BounceReason];

function check(rows: Row[], group: ReasonGroup) {
  for (const [status, diagnostic, command, reason] of rows) {
    it(`${status ?? 'no status'}${command ? ` at ${command}` : ''}: "${diagnostic}" is ${reason} (${group})`, () => {
      const input: ReasonInput = { status, diagnostic, command, action: 'failed' };
      const v = classifyReason(input);
      expect([v.reason, v.group]).toEqual([reason, group]);
    });
  }
}

describe('unknown users, in every wording (recipient-hard)', () => {
  check(
    [
      // English, with no 5.1.1 status or under a generic one
      [
        null,
        '550 5.1.1 <ann@example.org>: Recipient address rejected: User unknown in local recipient table',
        null,
        'userunknown',
      ],
      ['5.0.0', '550 Unknown local part ann in <ann@example.org>', null, 'userunknown'],
      ['5.0.0', '550 sorry, no mailbox here by that name. (#5.1.1)', null, 'userunknown'],
      ['5.0.0', '550 5.0.0 <ann@example.org>... User unknown', null, 'userunknown'],
      [
        '5.0.0',
        "Remote Server returned '550 5.1.10 RESOLVER.ADR.RecipientNotFound; Recipient not found by SMTP address lookup'",
        null,
        'userunknown',
      ],
      [
        null,
        "The email address you entered couldn't be found. Please check the recipient's email address and try to resend the message.",
        null,
        'userunknown',
      ],
      [null, "ann wasn't found at example.org.", null, 'userunknown'],
      [
        '5.0.0',
        "554 delivery error: dd This user doesn't have a yahoo.com account (ann@yahoo.com) [-5] - mta1.mail.example.com",
        null,
        'userunknown',
      ],
      [null, '550 MAILBOX NOT FOUND', null, 'userunknown'],
      [
        null,
        '550 Mailbox not found. http://service.mail.qq.com/cgi-bin/help?subtype=1&&id=20022&&no=1000728',
        null,
        'userunknown',
      ],
      [null, '550 User not found: ann@163.com', null, 'userunknown'],
      [null, '550 Local User [ann@example.com] not found.', null, 'userunknown'],
      [null, '551 5.1.1 recipient is not exist', null, 'userunknown'],
      [null, '550 RC:NE The email account does not exist.', null, 'userunknown'],
      [null, 'User ann@example.org not listed in Domino Directory', null, 'userunknown'],
      [null, '550 #2175041 unavailable mail user', null, 'userunknown'],
      [null, '550 The mailbox has been deleted', null, 'userunknown'],
      // Under 5.7.1 and said outright: the mailbox does not exist
      ['5.7.1', '550 5.7.1 No such user!', null, 'userunknown'],
      ['5.7.1', '550 5.7.1 550 User Unknown: ann@example.org', null, 'userunknown'],
      ['5.7.1', '550 5.7.1 <ann@example.org>: the recipient does not exist', null, 'userunknown'],
      // Wrapped over lines, with a typographic apostrophe
      [
        null,
        '550-5.1.1 The email account that you tried to\n550-5.1.1 reach does not exist.',
        null,
        'userunknown',
      ],
      [null, '554 This user doesn’t have a example.com account', null, 'userunknown'],
      // Other languages
      [null, '550 Benutzer unbekannt / User unknown', null, 'userunknown'],
      [null, '550 Benutzer nicht bekannt', null, 'userunknown'],
      [
        '5.0.0',
        '550 Die E-Mail-Adresse, die Sie eingegeben haben, wurde nicht gefunden.',
        null,
        'userunknown',
      ],
      [null, '550 5.1.1 Utilisateur inconnu', null, 'userunknown'],
      [null, "550 Le destinataire <ann@example.fr> n'existe pas", null, 'userunknown'],
      [null, "L'adresse de messagerie que vous avez entrée est introuvable.", null, 'userunknown'],
      [null, '550 Boite aux lettres inexistante', null, 'userunknown'],
      [null, '550 Usuario desconocido', null, 'userunknown'],
      [null, 'No se pudo encontrar la dirección de correo electrónico que escribiste.', null, 'userunknown'],
      [null, '550 utente sconosciuto', null, 'userunknown'],
      [null, '550 Usuário desconhecido', null, 'userunknown'],
      [null, '550 Onbekende gebruiker', null, 'userunknown'],
      [null, '550 Użytkownik nie istnieje', null, 'userunknown'],
      [null, '550 Пользователь не найден', null, 'userunknown'],
      [null, '550 Нет такого пользователя', null, 'userunknown'],
      [null, '550 收件人不存在', null, 'userunknown'],
      [null, '550 用户不存在', null, 'userunknown'],
      [null, '550 宛先のユーザーが存在しません', null, 'userunknown'],
      // Domino and Notes in other languages, Google Workspace, Apple, Verizon (Sisimai's MTA and host modules)
      [null, 'ann@example.org no se encuentra en el Directorio de Domino', null, 'userunknown'],
      [null, "ann@example.org non répertorié dans l'annuaire Domino", null, 'userunknown'],
      ['5.0.0', 'ann@example.jp は Domino ディレクトリには見つかりません', null, 'userunknown'],
      [null, 'ann@example.jp はディレクトリのリストにありません', null, 'userunknown'],
      [
        null,
        "The email account that you tried to reach does not exist. We couldn't deliver to ann@example.org because the address couldn't be found. Check for typos or unnecessary spaces and try again.",
        null,
        'userunknown',
      ],
      ['5.0.0', '550 5.0.0 <ann@icloud.example>: inactive email address', null, 'userunknown'],
      [null, '550 No valid recipients', null, 'userunknown'],
    ],
    'recipient-hard',
  );

  describe('what stays soft or sender-side', () => {
    check(
      [
        // A policy refusal worded as "mailbox unavailable" under 5.7.1, not at RCPT
        ['5.7.1', '550 5.7.1 Requested action not taken: mailbox unavailable', null, 'filtered'],
        // A carrier's filter: "user unknown" after DATA
        [null, '550 Unknown user ann@example.org', 'DATA', 'filtered'],
        // A mailbox-status code: the mailbox exists
        ['5.2.1', '550 5.2.1 <ann@example.jp>... User Unknown', null, 'filtered'],
      ],
      'soft',
    );
    check([['5.1.0', '550 5.1.0 <x@example.org> sender rejected', null, 'rejected']], 'sender-side');

    it('a temporary status or a delay notice keeps an unknown user soft', () => {
      for (const input of [
        {
          status: '4.1.1',
          diagnostic: '450 4.1.1 <ann@example.org>: Recipient address rejected: User unknown',
        },
        { status: '5.1.1', action: 'delayed', diagnostic: 'No such user' },
      ]) {
        const v = classifyReason(input);
        expect([v.reason, v.group]).toEqual(['userunknown', 'soft']);
      }
    });
  });
});

describe('unknown hosts and DNS failures (recipient-hard)', () => {
  check(
    [
      [
        '5.4.4',
        'Host or domain name not found. Name service error for name=example.invalid type=A: Host not found',
        null,
        'hostunknown',
      ],
      [
        null,
        '<ann@example.invalid>: Host or domain name not found. Name service error for name=example.invalid type=MX: Host not found, try again',
        null,
        'networkerror',
      ],
      [null, 'Unrouteable address', null, 'hostunknown'],
      [null, 'all relevant MX records point to non-existent hosts', null, 'hostunknown'],
      ['5.0.0', 'Host unknown (Name server: mail.example.invalid: host not found)', null, 'hostunknown'],
      [null, "Sorry, I couldn't find any host named example.invalid. (#5.1.2)", null, 'hostunknown'],
      [
        null,
        'DNS Error: Address resolution of example.invalid. failed: Domain name not found',
        null,
        'hostunknown',
      ],
      [
        null,
        "Your message wasn't delivered to ann@example.invalid because the domain example.invalid couldn't be found.",
        null,
        'hostunknown',
      ],
      [
        null,
        '550 5.4.310 DNS domain example.invalid does not exist [Message=InfoDomainNonexistent]',
        null,
        'hostunknown',
      ],
      ['5.4.310', '', null, 'hostunknown'],
      [null, '550 5.4.4 SMTPSEND.DNS.NonExistentDomain; nonexistent domain', null, 'hostunknown'],
      [
        null,
        '550 5.1.2 <ann@example.invalid>: Recipient address rejected: Domain not found',
        'RCPT',
        'hostunknown',
      ],
      [null, '553 5.1.2 Bad destination system address', null, 'hostunknown'],
      [null, '550 Domain existiert nicht', null, 'hostunknown'],
      [null, '550 Domaine inexistant', null, 'hostunknown'],
      [null, '550 Домен не существует', null, 'hostunknown'],
      [null, '556 5.1.10 Recipient address has null MX', null, 'notaccept'],
      [null, "Sorry, I couldn't find a mail exchanger or IP address. (#5.4.4)", null, 'notaccept'],
      // Exim, Gmail, KDDI, Messaging Server, OpenSMTPD and AOL as they write DNS failures
      [null, 'all host address lookups failed permanently', null, 'hostunknown'],
      [null, 'DNS Error: DNS server returned answer with no data for example.invalid', null, 'hostunknown'],
      [null, '550 As the remote domain doesnt exist', null, 'hostunknown'],
      ['5.0.0', '550 5.1.2 Illegal host/domain name found', null, 'hostunknown'],
      [null, 'no host found for existing SMTP connection', null, 'notaccept'],
      [null, 'Destination seem to reject all mails', null, 'notaccept'],
      [
        null,
        'DNS Error: type=MX: Malformed or unexpected name server reply for example.invalid',
        null,
        'notaccept',
      ],
    ].filter(([, , , reason]) => reason !== 'networkerror') as Row[],
    'recipient-hard',
  );

  it('a DNS failure said as temporary stays soft', () => {
    const v = classifyReason({
      diagnostic:
        'Host or domain name not found. Name service error for name=example.org type=MX: Host not found, try again',
      action: 'delayed',
    });
    expect(v.group).toBe('soft');
    const t = classifyReason({ status: '4.4.3', diagnostic: 'DNS Error: Domain name not found' });
    expect(t.group).toBe('soft');
  });
});

describe('full mailboxes (soft)', () => {
  check(
    [
      ['4.2.2', '452 4.2.2 The email account that you tried to reach is over quota.', null, 'mailboxfull'],
      [null, "552 5.2.2 The recipient's inbox is out of storage space.", null, 'mailboxfull'],
      [
        '5.0.0',
        '554 delivery error: dd Sorry your message to ann@yahoo.com cannot be delivered. This account is over quota.',
        null,
        'mailboxfull',
      ],
      [null, '552 5.2.2 Over STORAGE quota', null, 'mailboxfull'],
      [
        null,
        '550 Benutzer hat das Speichervolumen ueberschritten. / User has exhausted allowed storage space.',
        null,
        'mailboxfull',
      ],
      [null, '550 User has too many messages on the server.', null, 'mailboxfull'],
      [null, '552 Mailbox full - quota exceeded', null, 'mailboxfull'],
      [null, 'maildir delivery failed: userdisk quota 1000000 exceeded', null, 'mailboxfull'],
      [null, '552 Postfach voll', null, 'mailboxfull'],
      [null, '552 Boîte aux lettres pleine', null, 'mailboxfull'],
      [null, '552 Buzón lleno', null, 'mailboxfull'],
      [null, '552 Почтовый ящик переполнен', null, 'mailboxfull'],
      [null, '552 邮箱已满', null, 'mailboxfull'],
      // qmail: "mailbox unavailable" with the reason in brackets is not an unknown user
      [
        null,
        '552 Requested action not taken: mailbox unavailable (not enough free space)',
        null,
        'mailboxfull',
      ],
    ],
    'soft',
  );
});

describe('suspended or disabled accounts (soft)', () => {
  check(
    [
      ['5.2.1', '550 5.2.1 The email account that you tried to reach is disabled.', null, 'suspend'],
      [
        null,
        '554 delivery error: dd Sorry your message to ann@yahoo.com cannot be delivered. This account has been disabled or discontinued [#102].',
        null,
        'suspend',
      ],
      ['5.2.1', '550 5.2.1 <ann@gmx.de>... User is inactive', null, 'suspend'],
      [
        null,
        '550 Message was not accepted -- invalid mailbox. Local mailbox ann@mail.ru is unavailable: account is disabled',
        null,
        'suspend',
      ],
      [null, '550 ann@qq.com is a deactivated mailbox', null, 'suspend'],
      [null, '550 User suspended', null, 'suspend'],
      [null, '550 This account has been temporarily suspended', null, 'suspend'],
      [null, '550 Le compte du destinataire est bloqué', null, 'suspend'],
      [null, '550 Konto deaktiviert', null, 'suspend'],
      [null, '550 Аккаунт заблокирован', null, 'suspend'],
    ],
    'soft',
  );
});

describe('refusals of the sender or by policy (sender-side, never suppressed)', () => {
  check(
    [
      [
        '5.7.1',
        '554 5.7.1 Service unavailable; Client host [192.0.2.1] blocked using zen.spamhaus.org',
        'RCPT',
        'blocked',
      ],
      ['5.7.606', '550 5.7.606 Access denied, banned sending IP [192.0.2.1].', null, 'blocked'],
      ['5.7.1', '550 5.7.1 Sender verify failed', 'RCPT', 'rejected'],
      ['5.0.0', '550 Administrative prohibition', 'MAIL', 'rejected'],
      [
        '5.7.1',
        '550 5.7.1 Your access to submit messages to this e-mail system has been rejected',
        null,
        'rejected',
      ],
      ['5.1.8', '553 5.1.8 Domain of sender address does not exist', 'MAIL', 'rejected'],
      ['5.0.0', '550 Sorry, you are sending to/from an address that has been blacklisted', null, 'rejected'],
      [
        '5.7.26',
        "550 5.7.26 Unauthenticated email from example.org is not accepted due to domain's DMARC policy.",
        null,
        'authfailure',
      ],
      ['5.7.1', '554 5.7.1 Message rejected due to local policy', 'DATA', 'policyviolation'],
      [
        '4.7.0',
        '421 4.7.0 [TSS04] Messages from 192.0.2.1 temporarily deferred due to unexpected volume or user complaints',
        'MAIL',
        'speeding',
      ],
      [
        '5.7.1',
        '550-5.7.1 Gmail has detected that this message is likely unsolicited mail.',
        'DATA',
        'spamdetected',
      ],
      // Cox: invalid recipients counted against the sender, never an unknown user
      ['5.0.0', '550 too many invalid recipients', 'RCPT', 'speeding'],
    ],
    'sender-side',
  );
});

describe('the phrase tables', () => {
  it('match across line wraps, either apostrophe and unaccented spellings', () => {
    const re = compilePhrases({ phrases: ["doesn't exist", 'boîte pleine', 'no such user'] });
    expect(re.test('The mailbox DOESN’T EXIST')).toBe(true);
    expect(re.test('boite pleine')).toBe(true);
    expect(re.test('550 No such\r\n  user')).toBe(true);
    expect(re.test('no such thing')).toBe(false);
  });
});
