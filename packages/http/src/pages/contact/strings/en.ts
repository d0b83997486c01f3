import type { ContactPageStrings } from './strings.js';

/** English: the default. */
export const en: ContactPageStrings = {
  lang: 'en',
  preferencesTitle: 'Email preferences',
  preferencesIntro: 'Choose what {project} sends to {address}.',
  topicsLegend: 'I want to receive',
  noTopics: 'There is nothing to choose from yet.',
  save: 'Save preferences',
  saved: 'Your preferences are saved.',
  nothingChanged: 'Nothing changed: your preferences were already like this.',
  unsubscribeAllLegend: 'Everything',
  unsubscribeAllHint: 'Stop every email {project} sends to many people at once.',
  unsubscribeAll: 'Unsubscribe from everything',
  unsubscribedAll: 'You are unsubscribed from everything {project} sends to many people at once.',
  resubscribe: 'Subscribe again',
  resubscribed: 'You are subscribed again.',
  formExpired: 'This page was open too long, so nothing was saved. Please choose again and save.',
  invalidLinkTitle: 'Link not valid',
  invalidLink: 'This link is not valid. Use the link from your latest email.',
  erasedTitle: 'Nothing here any more',
  erased: 'The data of this address was erased. There are no preferences left to show.',
  errorStatus: 'Status {status} · request {request}',
};
