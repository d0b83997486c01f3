import { describe, expect, it } from 'vitest';
import { evaluateCondition } from '../src/automations/condition.js';
import { workflow } from '../src/automations/workflow-builder.js';
import { durationMs, parseWorkflow } from '../src/automations/workflow-schema.js';
import { MailroomError } from '../src/base/errors.js';

/** The definition's issues (path and message) when it is refused. */
function issuesOf(input: unknown): Array<{ path: string; message: string }> {
  try {
    parseWorkflow(input);
  } catch (error) {
    expect(error).toBeInstanceOf(MailroomError);
    expect((error as MailroomError).code).toBe('VALIDATION_FAILED');
    return ((error as MailroomError).issues ?? []).map((i) => ({
      path: i.path.join('.'),
      message: i.message,
    }));
  }
  throw new Error('the definition was accepted');
}

const base = { name: 'W', trigger: { event: 'signup' } };
const send = { type: 'send', template: 't', sender: 's@acme.test' };

describe('workflow definitions', () => {
  it('the builder makes the JSON the parser takes, every step with its id and defaults filled in', () => {
    const built = workflow('Cart')
      .on('cart.abandoned')
      .exitOn('order.placed')
      .reentry('one-at-a-time')
      .wait('1h')
      .send({ template: 'a', sender: 's@acme.test', id: 'first' })
      .waitForEvent('order.placed', { timeout: '24h', id: 'w' })
      .condition({ trait: 'plan', op: 'equals', value: 'pro' }, { onTrue: 'end' })
      .send({ template: 'b', sender: 's@acme.test' })
      .build();
    const parsed = parseWorkflow(JSON.parse(JSON.stringify(built)));
    expect(parsed).toMatchObject({
      reentry: 'one-at-a-time',
      exitOn: ['order.placed'],
      trigger: { event: 'cart.abandoned' },
    });
    expect(parsed.steps.map((s) => s.id)).toEqual(['step-1', 'first', 'w', 'step-4', 'step-5']);
    expect(parseWorkflow({ ...base, steps: [send] }).reentry).toBe('every-time');
  });

  it('refuses bad input with 400 issues naming the path in the definition', () => {
    expect(issuesOf({ ...base, steps: [send, { type: 'teleport' }] })).toEqual([
      expect.objectContaining({ path: 'steps.1.type' }),
    ]);
    expect(issuesOf({ ...base, steps: [{ ...send, next: 'nowhere' }] })).toEqual([
      { path: 'steps.0.next', message: 'No step "nowhere"' },
    ]);
    expect(
      issuesOf({
        ...base,
        steps: [
          { ...send, id: 'a' },
          { type: 'wait', id: 'b', duration: '1d', next: 'a' },
        ],
      }),
    ).toEqual([{ path: 'steps.1.next', message: 'Makes a cycle back to "a"' }]);
    expect(issuesOf({ ...base, steps: [{ type: 'wait', duration: '366d' }] })).toEqual([
      { path: 'steps.0.duration', message: 'At most a year (365d)' },
    ]);
    expect(
      issuesOf({ ...base, steps: [{ type: 'wait-for-event', event: 'x', timeout: '53w' }] }).map(
        (i) => i.path,
      ),
    ).toEqual(['steps.0.timeout']);
    expect(issuesOf({ ...base, steps: [{ type: 'wait', duration: '1h', until: '09:00' }] })).toEqual([
      { path: 'steps.0', message: 'Give exactly one of duration or until' },
    ]);
    expect(issuesOf({ ...base, steps: [{ type: 'wait', until: '25:00' }] })).toEqual([
      { path: 'steps.0.until', message: 'A time of day is HH:MM, 00:00 to 23:59' },
    ]);
    expect(issuesOf({ ...base, steps: [{ type: 'wait', duration: '2y' }] })).toEqual([
      { path: 'steps.0.duration', message: 'A duration is a whole number and a unit: 90s, 30m, 1h, 2d, 1w' },
    ]);
    expect(issuesOf({ ...base, steps: Array.from({ length: 10_000 }, () => send) })).toEqual([
      { path: 'steps', message: 'At most 100 steps (got 10000)' },
    ]);
    expect(issuesOf({ ...base, steps: [{ type: 'condition', if: { op: 'equals', value: 1 } }] })).toEqual([
      { path: 'steps.0.if', message: 'Name exactly one of trait, property or message' },
    ]);
    expect(
      issuesOf({ ...base, steps: [{ type: 'condition', if: { trait: 'plan', op: 'equals' } }] }),
    ).toEqual([{ path: 'steps.0.if.value', message: 'Required with op equals' }]);
    expect(
      issuesOf({
        ...base,
        steps: [
          { ...send, id: 'a' },
          { ...send, id: 'a' },
        ],
      }),
    ).toEqual([{ path: 'steps.1.id', message: 'Step id "a" is used twice' }]);
    expect(issuesOf({ ...base, trigger: { event: 'no spaces' }, steps: [send] }).map((i) => i.path)).toEqual([
      'trigger.event',
    ]);
    expect(issuesOf({ ...base, steps: [] }).map((i) => i.path)).toEqual(['steps']);
  });

  it('reads durations and conditions; a missing trait is never an error', () => {
    expect(durationMs('90s')).toBe(90_000);
    expect(durationMs('2d')).toBe(172_800_000);
    const traits = { plan: 'pro', seats: 5, tags: ['vip'], address: { country: 'FR' } };
    const props = { total: 49 };
    expect(evaluateCondition({ trait: 'plan', op: 'equals', value: 'pro' }, traits, props)).toBe(true);
    expect(evaluateCondition({ trait: 'seats', op: 'gt', value: 4 }, traits, props)).toBe(true);
    expect(evaluateCondition({ trait: 'tags', op: 'contains', value: 'vip' }, traits, props)).toBe(true);
    expect(evaluateCondition({ trait: 'address.country', op: 'equals', value: 'FR' }, traits, props)).toBe(
      true,
    );
    expect(evaluateCondition({ property: 'total', op: 'lte', value: 49 }, traits, props)).toBe(true);
    expect(evaluateCondition({ trait: 'nope', op: 'equals', value: 'x' }, traits, props)).toBe(false);
    expect(evaluateCondition({ trait: 'nope', op: 'gt', value: 1 }, traits, props)).toBe(false);
    expect(evaluateCondition({ trait: 'nope', op: 'missing' }, traits, props)).toBe(true);
    expect(evaluateCondition({ trait: 'constructor', op: 'exists' }, traits, props)).toBe(false);
  });
});
