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
};
