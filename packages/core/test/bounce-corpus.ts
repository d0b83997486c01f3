/**
 * The bounce corpus (`fixtures/bounce-corpus/`, real bounces from Sisimai's set-of-emails with Sisimai's
 * expected reasons) run through the parser and the reason classifier, with the agreement figures.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { BounceReason, ReasonGroup } from '../src/inbound/bounce-reasons.js';
import { classifyReport, type ReasonVerdict } from '../src/inbound/classify-reason.js';
import type { BounceRecipient, InboundReport } from '../src/inbound/inbound-report.js';
import { parseInboundMessage } from '../src/inbound/parse-inbound.js';
import { NO_SUCH_USER_WORDS } from '../src/inbound/reason-patterns.js';

/** What a message of the corpus is, by Sisimai's reading. */
export type CorpusKind = 'bounce' | 'delivery-report' | 'auto-reply' | 'complaint' | 'not-a-bounce';

/** One recipient as Sisimai's test tables expect it. */
export interface ExpectedRecipient {
  index: number;
  status: string;
  replyCode: string;
  reason: BounceReason;
  hardBounce: boolean;
  group: ReasonGroup;
}

/** One message of the manifest. */
export interface CorpusMessage {
  file: string;
  family: string;
  kind: CorpusKind;
  expectedFrom: string;
  recipients: ExpectedRecipient[];
}

/** One expected recipient next to what Mailroom made of it. */
export interface CorpusRow {
  message: CorpusMessage;
  expected: ExpectedRecipient;
  report: InboundReport;
  /** Mailroom's verdict for the recipient at the same position (or the last one), if any. */
  verdict: ReasonVerdict | undefined;
  /** The report's recipient that verdict is for. */
  recipient: BounceRecipient | undefined;
}

/**
 * Which part of the corpus a message is in: `held-out` (about a third) or `tuning`. Decided by the first
 * byte of the SHA-256 of the file name, so the split never moves when messages are added or the phrase
 * tables change. Phrases are tuned only by looking at the tuning part; the held-out part measures them.
 */
export type CorpusPart = 'tuning' | 'held-out';

/** The part of the corpus the message `file` is in (see {@link CorpusPart}). */
export function corpusPart(file: string): CorpusPart {
  const first = createHash('sha256').update(file).digest()[0] as number;
  return first % 3 === 0 ? 'held-out' : 'tuning';
}

/** The figures of one part of the corpus (or all of it). */
export interface PartFigures {
  messages: number;
  bounces: number;
  /** Bounces the parser read as a bounce report. */
  recognised: number;
  recipients: number;
  /** Recipients whose hard bounce (recipient-hard, suppressed) or not agrees with Sisimai's `hardBounce`. */
  hardAgreement: number;
  /** Of the others, those where Mailroom differs on purpose, by a documented rule ({@link differsOnPurpose}). */
  hardOnPurpose: number;
  groupAgreement: number;
}

/** The figures of a run. */
export interface CorpusFigures {
  messages: number;
  families: number;
  bounces: number;
  /** Bounces the parser read as a bounce report. */
  recognised: number;
  recipients: number;
  groupAgreement: number;
  reasonAgreement: number;
  /** Delivery reports and auto-replies, and how many of them change nothing. */
  noChange: { total: number; changedNothing: number };
  /** The same figures for each part of the split. */
  parts: Record<CorpusPart, PartFigures>;
}

const dir = (p: string) => fileURLToPath(new URL(`./fixtures/bounce-corpus/${p}`, import.meta.url));

/** The manifest's messages. */
export function corpusManifest(): CorpusMessage[] {
  return (JSON.parse(readFileSync(dir('manifest.json'), 'utf8')) as { messages: CorpusMessage[] }).messages;
}

/** Runs every message of the corpus through `parseInboundMessage` and `classifyReport`. */
export async function runCorpus(): Promise<{
  rows: CorpusRow[];
  figures: CorpusFigures;
  reports: Map<string, InboundReport>;
}> {
  const messages = corpusManifest();
  const rows: CorpusRow[] = [];
  const reports = new Map<string, InboundReport>();
  let recognised = 0;
  const recognisedIn = new Set<string>();
  let noChangeTotal = 0;
  let changedNothing = 0;
  for (const message of messages) {
    const report = await parseInboundMessage(readFileSync(dir(`messages/${message.file}`)));
    reports.set(message.file, report);
    const verdicts = classifyReport(report);
    if (message.kind === 'bounce' && report.type === 'bounce' && report.recipients.length > 0) {
      recognised++;
      recognisedIn.add(message.file);
    }
    if (message.kind === 'delivery-report' || message.kind === 'auto-reply') {
      noChangeTotal++;
      if (verdicts.every((v) => v.effect === 'none')) changedNothing++;
    }
    for (const [expected, verdict] of pair(message.recipients, verdicts)) {
      const recipient =
        report.type === 'bounce' && verdict ? report.recipients[verdicts.indexOf(verdict)] : undefined;
      rows.push({ message, expected, report, verdict, recipient });
    }
  }
  const agree = (f: (r: CorpusRow) => boolean) => rows.filter(f).length;
  return {
    rows,
    reports,
    figures: {
      messages: messages.length,
      families: new Set(messages.map((m) => m.family)).size,
      bounces: messages.filter((m) => m.kind === 'bounce').length,
      recognised,
      recipients: rows.length,
      groupAgreement: agree((r) => groupOf(r) === r.expected.group),
      reasonAgreement: agree((r) => r.verdict?.reason === r.expected.reason),
      noChange: { total: noChangeTotal, changedNothing },
      parts: {
        tuning: partFigures('tuning', messages, rows, recognisedIn),
        'held-out': partFigures('held-out', messages, rows, recognisedIn),
      },
    },
  };
}

function partFigures(
  part: CorpusPart,
  messages: CorpusMessage[],
  rows: CorpusRow[],
  recognisedIn: Set<string>,
): PartFigures {
  const mine = messages.filter((m) => corpusPart(m.file) === part);
  const myRows = rows.filter((r) => corpusPart(r.message.file) === part);
  return {
    messages: mine.length,
    bounces: mine.filter((m) => m.kind === 'bounce').length,
    recognised: mine.filter((m) => recognisedIn.has(m.file)).length,
    recipients: myRows.length,
    hardAgreement: myRows.filter((r) => isHard(r) === r.expected.hardBounce).length,
    hardOnPurpose: myRows.filter((r) => isHard(r) !== r.expected.hardBounce && differsOnPurpose(r)).length,
    groupAgreement: myRows.filter((r) => groupOf(r) === r.expected.group).length,
  };
}

/** Whether Mailroom reads the row as a hard bounce (the address is suppressed). */
export function isHard(row: CorpusRow): boolean {
  return groupOf(row) === 'recipient-hard';
}

/**
 * Why Mailroom's hard-or-not reading of a row differs from Sisimai's on purpose, by one of the rules of
 * docs/design-notes.md ("Bounce reading: where we differ from Sisimai"), or undefined:
 * - `no-such-user-words`: the refusal says outright that the mailbox does not exist; Sisimai reads it as
 *   `filtered` (or another soft reason) from the MTA module, the SMTP stage or a 5.7.x code;
 * - `temporary`: a recipient-hard reason under a 4.x.x status or in a delay notice stays soft.
 * The same rules apply to both parts of the split; the figures count these rows apart, never as agreement.
 */
export function differsOnPurpose(row: CorpusRow): 'no-such-user-words' | 'temporary' | undefined {
  if (isHard(row) === row.expected.hardBounce) return undefined;
  if (row.expected.hardBounce && row.verdict?.final === false) return 'temporary';
  const words = row.recipient?.diagnostic ?? '';
  if (!row.expected.hardBounce && row.verdict?.reason === 'userunknown' && NO_SUCH_USER_WORDS.test(words)) {
    return 'no-such-user-words';
  }
  return undefined;
}

/**
 * Pairs each expected recipient with one of Mailroom's verdicts for the message. Sisimai's tables give no
 * addresses, so a message's recipients are compared as a set: same reason first, then same group, then
 * in order; a report with fewer recipients lends its last verdict.
 */
function pair(
  expected: ExpectedRecipient[],
  verdicts: ReasonVerdict[],
): Array<[ExpectedRecipient, ReasonVerdict | undefined]> {
  const free = [...verdicts.keys()];
  const chosen = new Map<ExpectedRecipient, ReasonVerdict>();
  const take = (match: (e: ExpectedRecipient, v: ReasonVerdict) => boolean) => {
    for (const e of expected) {
      if (chosen.has(e)) continue;
      const k = free.findIndex((i) => match(e, verdicts[i] as ReasonVerdict));
      if (k < 0) continue;
      chosen.set(e, verdicts[free[k] as number] as ReasonVerdict);
      free.splice(k, 1);
    }
  };
  take((e, v) => v.reason === e.reason);
  take((e, v) => v.group === e.group);
  take(() => true);
  return expected.map((e) => [e, chosen.get(e) ?? verdicts.at(-1)]);
}

/** Mailroom's group for a row: an unrecognised message is no bounce. */
export function groupOf(row: CorpusRow): ReasonGroup {
  return row.verdict?.group ?? 'not-a-bounce';
}

/** `n` of `total` as a percentage with one decimal. */
export function percent(n: number, total: number): string {
  return `${((100 * n) / total).toFixed(1)} %`;
}
