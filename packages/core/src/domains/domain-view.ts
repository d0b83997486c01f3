import type { DkimKeyRecord, DomainRecord } from '../store/domain-store.js';
import { checkVerdict } from './domain-check.js';
import { type DnsRecordToPublish, dkimRecord, domainRecords, type SpfRelay } from './domain-records.js';
import type { DkimKeyView, DomainView } from './domains-options.js';

/** A domain as the API shows it: its keys without their private halves, the records to publish. */
export function domainView(record: DomainRecord, relay: SpfRelay | undefined): DomainView {
  const live = record.keys.filter((key) => key.state !== 'retired');
  const planned = domainRecords({
    domain: record.domain,
    dkim: live,
    ...(relay ? { relay } : {}),
    ...(record.returnPath
      ? {
          returnPath: {
            domain: record.returnPath,
            ...(record.returnPathMx ? { mx: record.returnPathMx } : {}),
          },
        }
      : {}),
    ...(record.dmarcReports ? { dmarcReports: record.dmarcReports } : {}),
  });
  const byName = new Map(live.map((key) => [`${key.selector}._domainkey.${record.domain}`, key]));
  const records = planned.map((planned) => {
    if (planned.kind === 'dkim') {
      const key = byName.get(planned.name);
      return key ? withNote(planned, keyNote(key, live)) : planned;
    }
    if (planned.kind === 'spf' || planned.kind === 'return-path-spf') {
      return withExistingSpf(planned, record);
    }
    return planned;
  });
  const signing = signingKeyOf(record.keys);
  return {
    domain: record.domain,
    state: record.state,
    check: record.findings ? checkVerdict(record.findings) : null,
    returnPath: record.returnPath,
    returnPathMx: record.returnPathMx,
    dmarcReports: record.dmarcReports,
    signingSelector: signing?.selector ?? null,
    keys: record.keys.map((key) => keyView(record.domain, key)),
    records,
    findings: record.findings,
    checkedAt: record.checkedAt,
    nextCheckAt: record.nextCheckAt,
    createdAt: record.createdAt,
  };
}

/** The key new mail is signed with: the most recently activated `active` key that can still sign. */
export function signingKeyOf(keys: readonly DkimKeyRecord[]): DkimKeyRecord | undefined {
  let best: DkimKeyRecord | undefined;
  for (const key of keys) {
    if (key.state !== 'active' || key.sealedPrivateKey === null) continue;
    if (!best || (key.activatedAt?.getTime() ?? 0) >= (best.activatedAt?.getTime() ?? 0)) best = key;
  }
  return best;
}

function keyView(domain: string, key: DkimKeyRecord): DkimKeyView {
  return {
    selector: key.selector,
    algorithm: key.algorithm,
    state: key.state,
    record: dkimRecord(domain, key),
    createdAt: key.createdAt,
    activatedAt: key.activatedAt,
    retireAt: key.retireAt,
  };
}

function keyNote(key: DkimKeyRecord, live: readonly DkimKeyRecord[]): string | undefined {
  if (key.state === 'retiring') {
    return `The replaced key: keep it published until ${key.retireAt?.toISOString() ?? 'the grace period ends'}, mail signed with it may still be on its way.`;
  }
  if (key.state === 'pending' && live.some((other) => other.state === 'active')) {
    return 'The new key of a rotation: publish it next to the current one; mail is signed with it once it is seen.';
  }
  return undefined;
}

/**
 * A domain has one SPF record: when the last check saw one, the advice is that record with what it lacks
 * (the check's `expected`), not a second record.
 */
function withExistingSpf(planned: DnsRecordToPublish, record: DomainRecord): DnsRecordToPublish {
  const seen = record.findings?.find((found) => found.kind === planned.kind && found.name === planned.name);
  const existing = seen?.actual.some((text) => /^v=spf1(?:\s|$)/i.test(text.trim()));
  if (!seen?.expected || !existing) return planned;
  const { note: _advice, ...rest } = planned;
  return {
    ...rest,
    value: seen.expected,
    note: 'A record is already published: edit it to this value (a name has one SPF record).',
  };
}

function withNote(record: DnsRecordToPublish, note: string | undefined): DnsRecordToPublish {
  return note === undefined ? record : { ...record, note };
}
