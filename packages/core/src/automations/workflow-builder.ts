import type { ConditionInput, StepInput, WorkflowInput } from './workflow-schema.js';

/** Common options of a step: its id (for branches to it) and where it goes next. */
interface StepOptions {
  id?: string;
  next?: string;
}

/**
 * A small typed builder of a workflow definition; `build()` gives the JSON that `automations.create`
 * (and `POST /automations`) takes, validated there like any other.
 *
 * @example
 * workflow('Abandoned cart')
 *   .on('cart.abandoned').exitOn('order.placed')
 *   .wait('1h')
 *   .send({ template: 'cart-reminder', sender: 'shop@acme.test' })
 *   .waitForEvent('order.placed', { timeout: '24h' })
 *   .send({ template: 'cart-last-call', sender: 'shop@acme.test' })
 *   .build();
 */
export interface WorkflowBuilder {
  /** The event that starts a run. */
  on(event: string): WorkflowBuilder;
  /** Events that end a run at once, wherever it is. */
  exitOn(...events: string[]): WorkflowBuilder;
  /** The re-entry rule (default `every-time`). */
  reentry(rule: NonNullable<WorkflowInput['reentry']>): WorkflowBuilder;
  /** Send a template to the contact, with the event's properties and the contact's traits as variables. */
  send(options: { template: string; sender: string; topic?: string } & StepOptions): WorkflowBuilder;
  /** Wait for a duration (`30m`, `1h`, `2d`). */
  wait(duration: string, options?: StepOptions): WorkflowBuilder;
  /** Wait until a time of day (`09:00`) in the contact's zone (the `timezone` trait, or `timezoneTrait`; else UTC). */
  waitUntil(time: string, options?: StepOptions & { timezoneTrait?: string }): WorkflowBuilder;
  /** Wait for an event of the contact, up to `timeout`; `onEvent` defaults to the end, `onTimeout` to the next step. */
  waitForEvent(
    event: string,
    options: { timeout: string; id?: string; onEvent?: string; onTimeout?: string },
  ): WorkflowBuilder;
  /** Branch on a trait of the contact or a property of the event; both branches default to the next step. */
  condition(
    test: ConditionInput,
    options?: { id?: string; onTrue?: string; onFalse?: string },
  ): WorkflowBuilder;
  /** Merge traits onto the contact's profile (null removes one) and set its topic states (a consent change). */
  updateContact(
    change: {
      traits?: Record<string, unknown>;
      topics?: Record<string, 'subscribed' | 'unsubscribed' | null>;
      /** Group memberships by the group's ref: true adds the contact, false removes it. */
      groups?: Record<string, boolean>;
    } & StepOptions,
  ): WorkflowBuilder;
  /** Call the app: an `automation.webhook` event to one webhook endpoint of the project, signed and retried. */
  webhook(options: { endpoint: string; payload?: Record<string, unknown> } & StepOptions): WorkflowBuilder;
  /** End the run here. */
  exit(options?: { id?: string }): WorkflowBuilder;
  /** The definition. */
  build(): WorkflowInput;
}

/** Starts a workflow definition named `name`. */
export function workflow(name: string): WorkflowBuilder {
  const definition: WorkflowInput = { name, trigger: { event: '' }, steps: [] };
  const steps = definition.steps as StepInput[];
  const add = (s: StepInput): WorkflowBuilder => {
    steps.push(stripUndefined(s));
    return builder;
  };
  const builder: WorkflowBuilder = {
    on(event) {
      definition.trigger = { event };
      return builder;
    },
    exitOn(...events) {
      definition.exitOn = [...(definition.exitOn ?? []), ...events];
      return builder;
    },
    reentry(rule) {
      definition.reentry = rule;
      return builder;
    },
    send: (o) => add({ type: 'send', ...o }),
    wait: (duration, o = {}) => add({ type: 'wait', duration, ...o }),
    waitUntil: (until, o = {}) => add({ type: 'wait', until, ...o }),
    waitForEvent: (event, o) => add({ type: 'wait-for-event', event, ...o }),
    condition: (test, o = {}) => add({ type: 'condition', if: test, ...o }),
    updateContact: (o) => add({ type: 'update-contact', ...o } as StepInput),
    webhook: (o) => add({ type: 'webhook', ...o }),
    exit: (o = {}) => add({ type: 'exit', ...o }),
    build: () => structuredClone(definition),
  };
  return builder;
}

function stripUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
