import type { ContactPageStrings } from './strings.js';

/** Deutsch. */
export const de: ContactPageStrings = {
  lang: 'de',
  preferencesTitle: 'E-Mail-Einstellungen',
  preferencesIntro: 'Wählen Sie, was {project} an {address} sendet.',
  topicsLegend: 'Ich möchte erhalten',
  noTopics: 'Noch gibt es nichts zur Auswahl.',
  save: 'Einstellungen speichern',
  saved: 'Ihre Einstellungen sind gespeichert.',
  nothingChanged: 'Nichts geändert: Ihre Einstellungen waren schon so.',
  unsubscribeAllLegend: 'Alles',
  unsubscribeAllHint: 'Keine E-Mails mehr, die {project} an viele Empfänger zugleich sendet.',
  unsubscribeAll: 'Von allem abmelden',
  unsubscribedAll: 'Sie sind von allen E-Mails abgemeldet, die {project} an viele Empfänger zugleich sendet.',
  resubscribe: 'Wieder anmelden',
  resubscribed: 'Sie sind wieder angemeldet.',
  formExpired:
    'Diese Seite war zu lange geöffnet, daher wurde nichts gespeichert. Bitte wählen Sie erneut und speichern Sie.',
  invalidLinkTitle: 'Ungültiger Link',
  invalidLink: 'Dieser Link ist ungültig. Bitte nutzen Sie den Link aus Ihrer letzten E-Mail.',
  erasedTitle: 'Hier ist nichts mehr',
  erased: 'Die Daten dieser Adresse wurden gelöscht. Es gibt keine Einstellungen mehr.',
  errorStatus: 'Status {status} · Anfrage {request}',
  thanksTitle: 'Vielen Dank',
  thanksText:
    'Wenn diese Adresse unsere E-Mails empfangen kann, erhalten Sie sie. Ist eine Bestätigung nötig, finden Sie eine Nachricht mit einem Link in Ihrem Posteingang.',
  confirmTitle: 'Anmeldung bestätigen',
  confirmText: 'Bestätigen Sie, dass {address} {what} von {project} erhalten möchte.',
  confirmButton: 'Anmeldung bestätigen',
  confirmedTitle: 'Anmeldung bestätigt',
  confirmedText: '{address} erhält {what} von {project}.',
  expiredTitle: 'Dieser Link ist abgelaufen',
  expiredText:
    'Bestätigungslinks gelten nur eine begrenzte Zeit. Fordern Sie einen neuen an und nutzen Sie ihn bald.',
  resendButton: 'Neuen Link senden',
  resentTitle: 'Sehen Sie in Ihren Posteingang',
  resentText: 'Ein neuer Bestätigungslink ist unterwegs an {address} (höchstens einer alle paar Minuten).',
  confirmInvalidTitle: 'Bestätigung',
  confirmInvalidText: 'Dieser Bestätigungslink ist ungültig.',
  theirMail: 'E-Mails',
};
