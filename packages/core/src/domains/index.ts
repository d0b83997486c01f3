export { checkBimi } from './check-bimi.js';
export { checkDkim, type DkimExpectation } from './check-dkim.js';
export { checkDmarc, checkReportAuthorization, type DmarcInputs } from './check-dmarc.js';
export { checkReturnPathMx } from './check-return-path.js';
export { checkSpf } from './check-spf.js';
export {
  checkSelector,
  DKIM_RSA_BITS,
  type DkimAlgorithm,
  type DkimKeyPair,
  dkimPublicKeyOf,
  generateDkimKey,
  newSelector,
} from './dkim-key.js';
export {
  createDnsResolver,
  type DnsResolver,
  type DnsResolverOptions,
  type Lookup,
  lookupMx,
  lookupTxt,
  type MailauthResolver,
  mailauthResolver,
} from './dns-lookup.js';
export {
  checkDomain,
  type DomainCheck,
  type DomainCheckOptions,
  type DomainCheckState,
} from './domain-check.js';
export type { DomainFinding, FindingKind, FindingState } from './domain-finding.js';
export { isWithinDomain, normalizeDomain } from './domain-name.js';
export {
  DEFAULT_SPF_MECHANISMS,
  type DkimPublication,
  type DnsRecordToPublish,
  type DomainRecordKind,
  type DomainRecordsInput,
  dkimRecord,
  dkimValue,
  dmarcValue,
  domainRecords,
  mergeSpf,
  type ReturnPathPlan,
  reportDomainOf,
  type SpfRelay,
  spfMechanisms,
  spfValue,
} from './domain-records.js';
export { DKIM_SEALING_SECRET_SETTING, openKey, sealKey } from './sealed-key.js';
