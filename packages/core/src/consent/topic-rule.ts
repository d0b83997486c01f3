import type { TopicRecord, TopicState, TopicStateRecord } from '../store/consent-records.js';

/** A topic key: 1 to 64 of `a-z 0-9 . _ -`, starting with a letter or digit. */
export const TOPIC_KEY = /^[a-z0-9][a-z0-9._-]{0,63}$/;

/**
 * What a contact receives of a topic: its explicit choice, else the topic's default (`opt-out` topics
 * reach everyone who has not said no; `opt-in` ones only who said yes). The one rule, read at source
 * expansion, at claim time and by the API.
 */
export function topicStateOf(
  topic: Pick<TopicRecord, 'defaultState'>,
  explicit: TopicState | undefined,
): TopicState {
  if (explicit) return explicit;
  return topic.defaultState === 'opt-out' ? 'subscribed' : 'unsubscribed';
}

/** The addresses of `addresses` a topic's mail may reach, given their explicit states. */
export function allowedByTopic(
  topic: Pick<TopicRecord, 'defaultState'>,
  states: readonly TopicStateRecord[],
  addresses: readonly string[],
): Set<string> {
  const explicit = new Map(states.map((s) => [s.address, s.state]));
  return new Set(addresses.filter((a) => topicStateOf(topic, explicit.get(a)) === 'subscribed'));
}
