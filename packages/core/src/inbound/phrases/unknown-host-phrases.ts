/**
 * How mail systems say that the recipient's domain does not exist or has no mail host (reasons
 * `hostunknown` and `notaccept`): DNS failures as the MTAs write them.
 *
 * Sources: Sisimai's `hostunknown` and `notaccept` phrase lists (lib/sisimai/reason/hostunknown.rb and
 * notaccept.rb in rb-sisimai, reason/why-hostunknown.go and why-notaccept.go in go-sisimai; BSD 2-Clause,
 * Copyright (C) azumakuniyuki; the phrases only), and the replies documented for Postfix (`Host or domain
 * name not found. Name service error for name=... type=MX: Host not found`, `Recipient address rejected:
 * Domain not found`), Exim (`Unrouteable address`, `all relevant MX records point to non-existent hosts`),
 * sendmail (`Host unknown (Name server: ...: host not found)`), qmail (`Sorry, I couldn't find any host
 * named ... (#5.1.2)`), Exchange and Microsoft 365 (`5.4.310 DNS domain ... does not exist`,
 * `SMTPSEND.DNS.NonExistentDomain`), Gmail (`DNS Error: Domain name not found`, "the domain ... couldn't be
 * found"), and the same in other languages. A temporary status (4.x.x) or a delay notice keeps any of
 * these soft: a DNS answer can be wrong for a while.
 */
import type { PhraseFamily } from './phrase-table.js';

/** The recipient's domain does not exist or has no host. */
export const NO_SUCH_DOMAIN: PhraseFamily = {
  phrases: [
    // From Sisimai's list
    'domain does not exist',
    'domain is not reachable',
    'domain must exist',
    'host or domain name not found',
    'host unknown',
    'mail domain mentioned in email address is unknown',
    'name or service not known',
    'no such domain',
    'recipient address rejected: unknown domain name',
    'recipient domain must exist',
    'the account or domain may not exist',
    'unknown host',
    'unroutable address',
    'unrouteable address',
    // From MTA and provider documentation
    'domain not found',
    'domain name not found',
    'domain is invalid',
    'domain doesn’t exist',
    "domain doesn't exist",
    'domain name does not exist',
    'unknown domain',
    'invalid domain',
    'nonexistent domain',
    'non-existent domain',
    'nonexistentdomain',
    'infodomainnonexistent',
    'nxdomain',
    'no such host',
    'bad destination system address',
    'all relevant mx records point to non-existent hosts',
    'unrouteable domain',
    'unrouteable mail domain',
    "couldn't find any host",
    'could not find any host',
    "can't find any host",
    'cannot find any host',
    'unable to resolve domain',
    'unable to resolve the domain',
    'domain could not be found',
    'domain couldn’t be found',
    "domain couldn't be found",
    // German, French, Spanish, Italian, Portuguese, Dutch, Polish, Russian, Chinese, Japanese
    'domain existiert nicht',
    'domäne existiert nicht',
    'unbekannte domain',
    'domaine inexistant',
    'domaine introuvable',
    'domaine inconnu',
    "le domaine n'existe pas",
    'el dominio no existe',
    'dominio inexistente',
    'dominio desconocido',
    'il dominio non esiste',
    'dominio sconosciuto',
    'domínio inexistente',
    'domínio não existe',
    'domein bestaat niet',
    'domena nie istnieje',
    'домен не существует',
    'домен не найден',
    'несуществующий домен',
    '域名不存在',
    'ドメインが存在しません',
  ],
  patterns: [
    // Postfix, sendmail: "Name service error for name=example.org type=MX: Host not found"; not Postfix's
    // temporary "Host not found, try again".
    /host (or domain name )?not found(?!, try again)/,
    /name service error .{0,60}host not found(?!, try again)/,
    /host [a-z0-9.-]+ not found/,
    // "553 example.org does not exist", Exchange's "DNS domain example.org does not exist"
    /(?<![@\w.-])[a-z0-9-]+(\.[a-z0-9-]+)+\.? does not exist/,
    /the domain \S+ (couldn['’]t|could not) be found/,
    /\bdns error: .{0,80}domain name not found/,
    // Exim: "all host address lookups failed permanently"; Gmail: "DNS Error: DNS server returned answer
    // with no data"; KDDI: "As the remote domain doesnt exist"; Sun/Oracle Messaging Server: "Illegal
    // host/domain name found" (Sisimai's Exim, Gmail, KDDI and MessagingServer modules)
    /all host address lookups failed permanently/,
    /dns server returned answer with no data/,
    /remote domain doesn['’]?t exist/,
    /illegal host\/domain name found/,
  ],
};

/** The domain exists but takes no mail: a null MX (RFC 7505) or no mail host at all. */
export const NO_MAIL_HOST: PhraseFamily = {
  phrases: [
    // From Sisimai's list
    'does not accept mail (nullmx)',
    'host/domain does not accept mail',
    'host does not accept mail',
    'mail receiving disabled',
    'name server: .: host not found',
    'no mx record found for domain=',
    // From documentation
    'null mx',
    'nullmx',
    'does not accept email',
    'does not accept e-mail',
    'does not accept mail',
    'doesn’t receive email',
    "doesn't receive email",
    'accepts no mail',
    'not accepting network mail',
    'not accepting network messages',
    "couldn't find a mail exchanger",
    'could not find a mail exchanger',
    'no mail exchanger',
    'no mx record',
    'no mx records',
    'no mx found',
    'no mail host',
    'no mail hosts',
    'mx record not found',
    'mx lookup failed',
    'indicated no smtp service',
    'mx or srv record indicated no',
    // Exim, OpenSMTPD and AOL (Sisimai's Exim, OpenSMTPD modules and its AOL host rules)
    'no host found for existing smtp connection',
    'destination seem to reject all mails',
    'type=mx: malformed or unexpected name server reply',
  ],
};
