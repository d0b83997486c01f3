import { z } from 'zod';
import type { ValidationIssue } from '../base/errors.js';
import { parseClockTime } from '../base/local-time.js';
import { toValidationIssues, validationError } from '../request/index.js';

/** An event name: 1 to 128 of `A-Z a-z 0-9 . _ : -` (the store matches names by these characters). */
export const EVENT_NAME = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;
/** A step id: 1 to 64 of `A-Z a-z 0-9 _ -`; `end` is the end of the workflow. */
const STEP_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
/** The most steps a workflow has. */
export const MAX_STEPS = 100;
/** The longest wait (and wait for an event): a year. */
export const MAX_WAIT_MS = 365 * 86_400_000;

const UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };
const DURATION = /^(\d{1,9})(s|m|h|d|w)$/;

/** A duration's milliseconds (`90s`, `30m`, `1h`, `2d`, `1w`). */
export function durationMs(value: string): number {
  const match = DURATION.exec(value);
  if (!match) throw new Error(`not a duration: ${value}`);
  return Number(match[1]) * (UNITS[match[2] as string] as number);
}

const duration = z
  .string()
  .regex(DURATION, 'A duration is a whole number and a unit: 90s, 30m, 1h, 2d, 1w')
  // zod runs refinements after a failed regex too: a malformed duration is its issue alone.
  .refine((v) => !DURATION.test(v) || durationMs(v) <= MAX_WAIT_MS, 'At most a year (365d)')
  .refine((v) => !DURATION.test(v) || durationMs(v) > 0, 'Must be longer than 0');
const eventName = z.string().regex(EVENT_NAME, 'An event name is 1 to 128 of A-Z a-z 0-9 . _ : -');
const stepId = z.string().regex(STEP_ID, 'A step id is 1 to 64 of A-Z a-z 0-9 _ -');
/** Where a branch goes: a step id, or `end`. */
const target = stepId.optional();
const scalar = z.union([z.string().max(1024), z.number(), z.boolean(), z.null()]);

const condition = z
  .strictObject({
    /** A trait of the contact's profile (`plan`). */
    trait: z.string().min(1).max(256).optional(),
    /** A property of the starting event (`total`). */
    property: z.string().min(1).max(256).optional(),
    /** The id of an earlier send step, with op `opened`, `clicked`, `not-opened` or `not-clicked`. */
    message: z.string().min(1).max(64).optional(),
    op: z.enum([
      'equals',
      'not-equals',
      'exists',
      'missing',
      'gt',
      'gte',
      'lt',
      'lte',
      'contains',
      'opened',
      'clicked',
      'not-opened',
      'not-clicked',
    ]),
    value: scalar.optional(),
  })
  .superRefine((c, ctx) => {
    const named = [c.trait, c.property, c.message].filter((v) => v !== undefined).length;
    if (named !== 1) {
      ctx.addIssue({ code: 'custom', path: [], message: 'Name exactly one of trait, property or message' });
    }
    const onMessage = ['opened', 'clicked', 'not-opened', 'not-clicked'].includes(c.op);
    if (onMessage !== (c.message !== undefined) && named === 1) {
      ctx.addIssue({
        code: 'custom',
        path: ['op'],
        message: 'opened, clicked, not-opened and not-clicked go with message, and only they',
      });
    }
    const needsValue = c.op !== 'exists' && c.op !== 'missing' && !onMessage;
    if (needsValue && c.value === undefined) {
      ctx.addIssue({ code: 'custom', path: ['value'], message: `Required with op ${c.op}` });
    }
    if (['gt', 'gte', 'lt', 'lte'].includes(c.op) && c.value !== undefined && typeof c.value !== 'number') {
      ctx.addIssue({ code: 'custom', path: ['value'], message: `op ${c.op} compares numbers` });
    }
  });

const sendStep = z.strictObject({
  id: stepId.optional(),
  type: z.literal('send'),
  /** The template's ref (it must exist in the project). */
  template: z.string().min(1).max(256),
  /** The sender's address (a sender of the project). */
  sender: z.string().min(3).max(320),
  /** A topic the message is held to: not sent to a contact who left it. */
  topic: z.string().min(1).max(256).optional(),
  next: target,
});
const waitStep = z
  .strictObject({
    id: stepId.optional(),
    type: z.literal('wait'),
    /** How long to wait. */
    duration: duration.optional(),
    /** Or: until this time of day (`09:00`) in the contact's zone (its `timezoneTrait`, else UTC). */
    until: z
      .string()
      .refine((v) => parseClockTime(v) !== undefined, 'A time of day is HH:MM, 00:00 to 23:59')
      .optional(),
    /** The trait holding the contact's IANA zone (`Europe/Berlin`). @default 'timezone' */
    timezoneTrait: z.string().min(1).max(256).optional(),
    next: target,
  })
  .superRefine((w, ctx) => {
    if ((w.duration === undefined) === (w.until === undefined)) {
      ctx.addIssue({ code: 'custom', path: [], message: 'Give exactly one of duration or until' });
    }
  });
const waitForEventStep = z.strictObject({
  id: stepId.optional(),
  type: z.literal('wait-for-event'),
  event: eventName,
  timeout: duration,
  /** Where the run goes when the event comes (default: `end`). */
  onEvent: target,
  /** Where it goes when the timeout passes first (default: the next step). */
  onTimeout: target,
});
const conditionStep = z.strictObject({
  id: stepId.optional(),
  type: z.literal('condition'),
  if: condition,
  /** Where the run goes when the condition holds (default: the next step). */
  onTrue: target,
  /** Where it goes when it does not (default: the next step). */
  onFalse: target,
});
const updateContactStep = z
  .strictObject({
    id: stepId.optional(),
    type: z.literal('update-contact'),
    /** Traits merged onto the contact's profile at the top level; null removes one. */
    traits: z
      .record(z.string().min(1).max(256), z.unknown())
      .refine((t) => Object.keys(t).length <= 100, 'At most 100 traits')
      .refine((t) => JSON.stringify(t).length <= 16 * 1024, 'At most 16 KiB of JSON')
      .optional(),
    /** Topic states to set (null: back to the topic's default); a consent change of source `automation`. */
    topics: z
      .record(z.string().min(1).max(64), z.enum(['subscribed', 'unsubscribed']).nullable())
      .refine((t) => Object.keys(t).length <= 50, 'At most 50 topics')
      .optional(),
    /** Group memberships to set, by the group's ref: true adds the contact, false removes it. */
    groups: z
      .record(z.string().min(1).max(64), z.boolean())
      .refine((g) => Object.keys(g).length <= 50, 'At most 50 groups')
      .optional(),
    next: target,
  })
  .superRefine((u, ctx) => {
    if (u.traits === undefined && u.topics === undefined && u.groups === undefined) {
      ctx.addIssue({ code: 'custom', path: [], message: 'Give traits, topics or groups' });
    }
  });
const webhookStep = z.strictObject({
  id: stepId.optional(),
  type: z.literal('webhook'),
  /** A webhook endpoint of the project (`wh_…`): the call is signed with its secret and retried like any event. */
  endpoint: z.string().min(1).max(128),
  /** What the call carries besides the run (`data.automation.payload`); at most 16 KiB of JSON. */
  payload: z
    .record(z.string(), z.unknown())
    .refine((p) => JSON.stringify(p).length <= 16 * 1024, 'At most 16 KiB of JSON')
    .optional(),
  next: target,
});
const exitStep = z.strictObject({ id: stepId.optional(), type: z.literal('exit') });

const step = z.discriminatedUnion('type', [
  sendStep,
  waitStep,
  waitForEventStep,
  conditionStep,
  updateContactStep,
  webhookStep,
  exitStep,
]);

/** The workflow definition as the API takes it (JSON), before the checks across steps. */
export const workflowSchema = z.strictObject({
  name: z.string().trim().min(1).max(256),
  trigger: z.strictObject({ event: eventName }),
  /** `every-time`: a run per triggering event; `once`: once ever per contact; `one-at-a-time`: not while one runs. */
  reentry: z.enum(['every-time', 'once', 'one-at-a-time']).optional(),
  /** Events that end a run at once, wherever it is. */
  exitOn: z.array(eventName).max(20).optional(),
  steps: z.array(step).min(1),
});

/** A workflow's definition (JSON), as written and as the builder makes it. */
export type WorkflowInput = z.input<typeof workflowSchema>;
/** A step of a definition. */
export type StepInput = z.input<typeof step>;
/** A condition of a `condition` step. */
export type ConditionInput = z.input<typeof condition>;

/** A validated definition: every step has its id; defaults filled in. */
export interface WorkflowDefinition {
  name: string;
  trigger: { event: string };
  reentry: 'every-time' | 'once' | 'one-at-a-time';
  exitOn: string[];
  steps: Step[];
}

/** A validated step. */
export type Step = z.output<typeof step> & { id: string };
/** A validated condition. */
export type Condition = z.output<typeof condition>;

/**
 * Validates a definition: its shape (zod), then across steps: unique ids, branches to steps that exist,
 * no cycle. Throws `VALIDATION_FAILED` whose issues name the path in the definition
 * (`steps[2].next: No step "x"`). Templates are checked by the caller, against the project.
 */
export function parseWorkflow(input: unknown): WorkflowDefinition {
  const count = (input as { steps?: unknown } | null)?.steps;
  if (Array.isArray(count) && count.length > MAX_STEPS) {
    throw validationError([
      { code: 'too_big', path: ['steps'], message: `At most ${MAX_STEPS} steps (got ${count.length})` },
    ]);
  }
  const parsed = workflowSchema.safeParse(input);
  if (!parsed.success) throw validationError(toValidationIssues(parsed.error.issues));
  const body = parsed.data;
  const steps = body.steps.map((s, i) => ({ ...s, id: s.id ?? `step-${i + 1}` })) as Step[];
  const issues: ValidationIssue[] = [];
  const index = new Map<string, number>();
  steps.forEach((s, i) => {
    if (s.id === 'end') issues.push(issue(['steps', i, 'id'], '"end" names the end of the workflow'));
    else if (index.has(s.id)) issues.push(issue(['steps', i, 'id'], `Step id "${s.id}" is used twice`));
    else index.set(s.id, i);
  });
  const edges = steps.map((s, i) => branches(s, steps[i + 1]?.id));
  edges.forEach((list, i) => {
    for (const [field, to] of list) {
      if (to !== 'end' && !index.has(to)) issues.push(issue(['steps', i, field], `No step "${to}"`));
    }
  });
  steps.forEach((s, i) => {
    if (s.type !== 'condition' || s.if.message === undefined) return;
    const sender = steps.findIndex((t) => t.id === s.if.message);
    if (steps[sender]?.type !== 'send') {
      issues.push(issue(['steps', i, 'if', 'message'], `No send step "${s.if.message}"`));
    }
  });
  if (issues.length === 0) {
    const cycle = findCycle(edges, index);
    if (cycle) issues.push(issue(['steps', cycle.from, cycle.field], `Makes a cycle back to "${cycle.to}"`));
  }
  if (issues.length > 0) throw validationError(issues);
  return {
    name: body.name,
    trigger: body.trigger,
    reentry: body.reentry ?? 'every-time',
    exitOn: [...new Set(body.exitOn ?? [])],
    steps,
  };
}

/** Where a step may go next, by field: explicit branches, else the following step (or the end). */
export function branches(s: Step, following: string | undefined): Array<[string, string]> {
  const next = following ?? 'end';
  switch (s.type) {
    case 'send':
    case 'wait':
    case 'update-contact':
    case 'webhook':
      return [['next', s.next ?? next]];
    case 'wait-for-event':
      return [
        ['onEvent', s.onEvent ?? 'end'],
        ['onTimeout', s.onTimeout ?? next],
      ];
    case 'condition':
      return [
        ['onTrue', s.onTrue ?? next],
        ['onFalse', s.onFalse ?? next],
      ];
    case 'exit':
      return [];
  }
}

function issue(path: Array<string | number>, message: string): ValidationIssue {
  return { code: 'custom', path, message };
}

/** The first edge that closes a cycle, by a depth-first walk from the first step. */
function findCycle(
  edges: Array<Array<[string, string]>>,
  index: Map<string, number>,
): { from: number; field: string; to: string } | undefined {
  const state = new Array<0 | 1 | 2>(edges.length).fill(0);
  const visit = (i: number): { from: number; field: string; to: string } | undefined => {
    state[i] = 1;
    for (const [field, to] of edges[i] ?? []) {
      if (to === 'end') continue;
      const j = index.get(to) as number;
      if (state[j] === 1) return { from: i, field, to };
      if (state[j] === 0) {
        const found = visit(j);
        if (found) return found;
      }
    }
    state[i] = 2;
    return undefined;
  };
  for (let i = 0; i < edges.length; i++) {
    if (state[i] === 0) {
      const found = visit(i);
      if (found) return found;
    }
  }
  return undefined;
}
