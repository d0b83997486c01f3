/** Store conformance: the AutomationStore role (workflows and versions, tracked events, runs with leases). */
import { expect, it } from 'vitest';
import type {
  AutomationEventRecord,
  RunAdvance,
  RunRecord,
  WorkflowRecord,
  WorkflowVersionRecord,
} from '../store/automation-records.js';
import { testId, testTime } from './store-fixtures.js';
import { makeEvent } from './store-suite-events.js';
import { addresses, expectStoreError, type StoreSuiteContext, seedProject } from './store-suite-helpers.js';

/** A test workflow (active, version 1, triggered by `cart.abandoned`). */
export function makeWorkflow(projectId: string, overrides: Partial<WorkflowRecord> = {}): WorkflowRecord {
  return {
    id: testId('wf'),
    projectId,
    name: 'Cart ç',
    status: 'active',
    version: 1,
    trigger: 'cart.abandoned',
    createdAt: testTime(),
    updatedAt: testTime(),
    ...overrides,
  };
}

/** A version of a test workflow. */
export function makeWorkflowVersion(workflowId: string, version = 1): WorkflowVersionRecord {
  return {
    workflowId,
    version,
    definition: { name: 'Cart ç', steps: [{ id: 'a', type: 'wait', duration: `${version}h` }] },
    createdAt: testTime(version),
  };
}

/** A test event of `contact`. */
export function makeAutomationEvent(
  projectId: string,
  contact: string,
  overrides: Partial<AutomationEventRecord> = {},
): AutomationEventRecord {
  return {
    projectId,
    id: testId('evt'),
    name: 'cart.abandoned',
    contact,
    properties: { total: 12.5, items: ['a', 'ç'] },
    at: testTime(),
    ...overrides,
  };
}

/** A test run of `workflow`, due at `testTime()`. */
export function makeRun(
  workflow: WorkflowRecord,
  contact: string,
  overrides: Partial<RunRecord> = {},
): RunRecord {
  const triggerEventId = overrides.triggerEventId ?? testId('evt');
  return {
    id: testId('run'),
    projectId: workflow.projectId,
    workflowId: workflow.id,
    version: workflow.version,
    contact,
    triggerEventId,
    entryKey: triggerEventId,
    mode: 'live',
    status: 'active',
    step: 'a',
    stepStartedAt: testTime(),
    dueAt: testTime(),
    timerAt: null,
    listens: ['order.placed'],
    data: { total: 12.5 },
    sent: {},
    endReason: null,
    startedAt: testTime(),
    updatedAt: testTime(),
    endedAt: null,
    ...overrides,
  };
}

const advanceOf = (run: RunRecord, overrides: Partial<RunAdvance> = {}): RunAdvance => ({
  status: 'active',
  sent: run.sent,
  step: run.step,
  stepStartedAt: run.stepStartedAt,
  dueAt: run.dueAt,
  timerAt: run.timerAt,
  listens: run.listens,
  endReason: null,
  endedAt: null,
  ...overrides,
});

/** Registers the tests of automations. */
export function describeAutomations(ctx: StoreSuiteContext): void {
  async function seedWorkflow(overrides: Partial<WorkflowRecord> = {}) {
    const { project } = await seedProject(ctx.store);
    const workflow = makeWorkflow(project.id, overrides);
    await ctx.store.createWorkflow(workflow, makeWorkflowVersion(workflow.id));
    return { project, workflow };
  }
  /** Starts `run` through a tracked event of its own. */
  async function start(run: RunRecord) {
    const event = makeAutomationEvent(run.projectId, run.contact, {
      id: run.triggerEventId,
      at: run.startedAt,
    });
    return ctx.store.trackEvent({ event, runs: [{ run }] });
  }

  it('creates, reads, lists and finds workflows by trigger, scoped by project; deleted ones are left out', async () => {
    const { project, workflow } = await seedWorkflow();
    const second = makeWorkflow(project.id, { createdAt: testTime(1), trigger: 'signup' });
    await ctx.store.createWorkflow(second, makeWorkflowVersion(second.id));
    const { project: other } = await seedProject(ctx.store);
    await expectStoreError(ctx.store.createWorkflow(workflow, makeWorkflowVersion(workflow.id)), 'CONFLICT', [
      workflow.id,
    ]);
    expect(await ctx.store.getWorkflow(project.id, workflow.id)).toEqual(workflow);
    expect(await ctx.store.getWorkflow(other.id, workflow.id)).toBeUndefined();
    expect((await ctx.store.listWorkflows(project.id)).map((w) => w.id)).toEqual([workflow.id, second.id]);
    expect((await ctx.store.findTriggered(project.id, 'cart.abandoned')).map((w) => w.id)).toEqual([
      workflow.id,
    ]);
    expect(await ctx.store.findTriggered(other.id, 'cart.abandoned')).toEqual([]);
    expect(await ctx.store.getWorkflowVersion(workflow.id, 1)).toEqual(makeWorkflowVersion(workflow.id));
    expect(await ctx.store.setWorkflowStatus(project.id, workflow.id, 'paused', testTime(2))).toBe(true);
    expect(await ctx.store.findTriggered(project.id, 'cart.abandoned')).toEqual([]);
    expect(await ctx.store.setWorkflowStatus(project.id, workflow.id, 'deleted', testTime(3))).toBe(true);
    expect(await ctx.store.setWorkflowStatus(project.id, workflow.id, 'active', testTime(4))).toBe(false);
    expect((await ctx.store.listWorkflows(project.id)).map((w) => w.id)).toEqual([second.id]);
    expect(await ctx.store.getWorkflow(project.id, workflow.id)).toMatchObject({
      status: 'deleted',
      updatedAt: testTime(3),
    });
  });

  it('writes the next version by compare-and-set: of concurrent writers exactly one wins; old versions stay', async () => {
    const { project, workflow } = await seedWorkflow();
    const results = await Promise.all(
      Array.from({ length: ctx.concurrency }, () =>
        ctx.store.writeWorkflowVersion(project.id, 1, {
          name: 'Renamed',
          trigger: 'cart.left',
          version: makeWorkflowVersion(workflow.id, 2),
        }),
      ),
    );
    const won = results.filter((r) => r !== undefined);
    expect(won).toHaveLength(1);
    expect(won[0]).toMatchObject({ version: 2, name: 'Renamed', trigger: 'cart.left' });
    expect(await ctx.store.getWorkflowVersion(workflow.id, 1)).toEqual(makeWorkflowVersion(workflow.id, 1));
    expect(await ctx.store.getWorkflowVersion(workflow.id, 2)).toEqual(makeWorkflowVersion(workflow.id, 2));
    expect((await ctx.store.findTriggered(project.id, 'cart.left')).map((w) => w.id)).toEqual([workflow.id]);
  });

  it('records an event once per id, and starts a run once per entry key, even under concurrent calls', async () => {
    const { project, workflow } = await seedWorkflow();
    const [a] = addresses(1) as [string];
    const event = makeAutomationEvent(project.id, a);
    const run = makeRun(workflow, a, { triggerEventId: event.id, entryKey: event.id });
    const first = await ctx.store.trackEvent({ event, runs: [{ run }] });
    expect(first).toEqual({ recorded: true, started: [run] });
    expect(await ctx.store.trackEvent({ event, runs: [{ run: makeRun(workflow, a) }] })).toEqual({
      recorded: false,
      started: [],
    });
    expect(await ctx.store.getRun(project.id, run.id)).toEqual(run);
    // `once`: concurrent events of one contact, one run, and only its outbox rows.
    const tries = Array.from({ length: ctx.concurrency }, () => {
      const e = makeAutomationEvent(project.id, a);
      const outbox = {
        events: [makeEvent(project.id, { type: 'automation.run_started', address: a })],
        messages: [],
      };
      return ctx.store.trackEvent({
        event: e,
        runs: [{ run: makeRun(workflow, a, { triggerEventId: e.id, entryKey: 'once' }), outbox }],
      });
    });
    const outcomes = await Promise.all(tries);
    expect(outcomes.every((o) => o.recorded)).toBe(true);
    expect(outcomes.flatMap((o) => o.started)).toHaveLength(1);
    expect(await ctx.store.listEvents(project.id, {}, { limit: 100 })).toHaveLength(1);
    expect(await ctx.store.findEvents(project.id, a, ['cart.abandoned'], testTime(), 100)).toHaveLength(
      ctx.concurrency + 1,
    );
  });

  it('finds a contact’s events by name from a time, in time order', async () => {
    const { project } = await seedProject(ctx.store);
    const [a, b] = addresses(2) as [string, string];
    const early = makeAutomationEvent(project.id, a, { name: 'order.placed', at: testTime(1) });
    const late = makeAutomationEvent(project.id, a, { name: 'order.placed', at: testTime(5) });
    const other = makeAutomationEvent(project.id, a, { name: 'page.viewed', at: testTime(6) });
    const theirs = makeAutomationEvent(project.id, b, { name: 'order.placed', at: testTime(7) });
    for (const e of [late, other, early, theirs]) await ctx.store.trackEvent({ event: e, runs: [] });
    expect(await ctx.store.findEvents(project.id, a, ['order.placed'], testTime(0), 10)).toEqual([
      early,
      late,
    ]);
    expect(await ctx.store.findEvents(project.id, a, ['order.placed'], testTime(2), 10)).toEqual([late]);
    expect(
      (await ctx.store.findEvents(project.id, a, ['order.placed', 'page.viewed'], testTime(0), 2)).map(
        (e) => e.id,
      ),
    ).toEqual([early.id, late.id]);
    expect(await ctx.store.findEvents(project.id, a, [], testTime(0), 10)).toEqual([]);
  });

  it('claims due runs of unpaused workflows once per lease, disjoint under concurrent claimers', async () => {
    const { workflow } = await seedWorkflow();
    const contacts = addresses(20);
    const runs = contacts.map((c, i) => makeRun(workflow, c, { dueAt: testTime(i) }));
    for (const run of runs) await start(run);
    const late = makeRun(workflow, 'late@example.com', { dueAt: testTime(60_000) });
    await start(late);
    const claims = await Promise.all(
      Array.from({ length: ctx.concurrency }, () =>
        ctx.store.claimRuns({ now: testTime(1000), limit: 5, leaseMs: 10_000 }),
      ),
    );
    const ids = claims.flat().map((r) => r.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(new Set(ids)).toEqual(new Set(runs.map((r) => r.id)));
    expect(await ctx.store.claimRuns({ now: testTime(2000), limit: 50, leaseMs: 10_000 })).toEqual([]);
    // After the lease, claimed again with a new token.
    const again = await ctx.store.claimRuns({ now: testTime(20_000), limit: 1, leaseMs: 10_000 });
    const before = claims.flat().find((r) => r.id === again[0]?.id);
    expect(again[0]?.leaseToken).toBeGreaterThan(before?.leaseToken ?? 0);
    expect(again[0]).toMatchObject({ ...runs[0], updatedAt: testTime(20_000) });
    // A paused workflow's runs wait.
    await ctx.store.setWorkflowStatus(workflow.projectId, workflow.id, 'paused', testTime(1));
    expect(await ctx.store.claimRuns({ now: testTime(100_000), limit: 50, leaseMs: 1 })).toEqual([]);
    await ctx.store.setWorkflowStatus(workflow.projectId, workflow.id, 'active', testTime(1));
    expect(await ctx.store.claimRuns({ now: testTime(100_000), limit: 50, leaseMs: 1 })).toHaveLength(21);
  });

  it('advances a run fenced by its token; a wake during the lease keeps it due; an end frees its one-at-a-time slot', async () => {
    const { project, workflow } = await seedWorkflow();
    const [a] = addresses(1) as [string];
    const run = makeRun(workflow, a, { entryKey: 'active' });
    await start(run);
    const [claimed] = await ctx.store.claimRuns({ now: testTime(10), limit: 1, leaseMs: 60_000 });
    if (!claimed) throw new Error('not claimed');
    const sleep = advanceOf(run, {
      step: 'b',
      timerAt: testTime(3_600_000),
      dueAt: testTime(3_600_000),
      sent: { a: 'msg_1' },
    });
    const opts = { release: true, wakeSeq: claimed.wakeSeq, now: testTime(20) };
    expect(await ctx.store.advanceRun(run.id, claimed.leaseToken + 1, sleep, opts)).toBe(false);
    expect(await ctx.store.getRun(project.id, run.id)).toMatchObject({ step: 'a' });
    // An event the run listens to arrives while it is leased: its release keeps it due from then.
    const order = makeAutomationEvent(project.id, a, { name: 'order.placed', at: testTime(15) });
    await ctx.store.trackEvent({ event: order, runs: [] });
    expect(await ctx.store.advanceRun(run.id, claimed.leaseToken, sleep, opts)).toBe(true);
    expect(await ctx.store.getRun(project.id, run.id)).toMatchObject({
      step: 'b',
      sent: { a: 'msg_1' },
      timerAt: testTime(3_600_000),
      dueAt: testTime(15),
      updatedAt: testTime(20),
    });
    const [woken] = await ctx.store.claimRuns({ now: testTime(30), limit: 1, leaseMs: 60_000 });
    expect(woken?.id).toBe(run.id);
    if (!woken) return;
    // Without a wake the release sleeps until the timer; an event it does not listen to wakes nothing.
    await ctx.store.trackEvent({
      event: makeAutomationEvent(project.id, a, { name: 'x', at: testTime(31) }),
      runs: [],
    });
    const wait = { release: true, wakeSeq: woken.wakeSeq, now: testTime(40) };
    expect(await ctx.store.advanceRun(run.id, woken.leaseToken, sleep, wait)).toBe(true);
    expect(await ctx.store.claimRuns({ now: testTime(50), limit: 1, leaseMs: 60_000 })).toEqual([]);
    // A one-at-a-time run holds its slot until it ends.
    const blocked = makeRun(workflow, a, { entryKey: 'active' });
    expect((await start(blocked)).started).toEqual([]);
    const [last] = await ctx.store.claimRuns({ now: testTime(3_600_000), limit: 1, leaseMs: 60_000 });
    if (!last) throw new Error('not claimed at its timer');
    const ended = advanceOf(run, {
      status: 'exited',
      step: null,
      dueAt: null,
      timerAt: null,
      listens: [],
      endReason: 'exit-event:order.placed',
      endedAt: testTime(3_600_001),
    });
    const endOpts = { release: true, wakeSeq: last.wakeSeq, now: testTime(3_600_001) };
    const exitedEvent = () => ({
      events: [makeEvent(project.id, { type: 'automation.run_exited', address: a })],
      messages: [],
    });
    expect(await ctx.store.advanceRun(run.id, last.leaseToken, ended, endOpts, exitedEvent())).toBe(true);
    expect(await ctx.store.advanceRun(run.id, last.leaseToken, ended, endOpts, exitedEvent())).toBe(false);
    expect((await ctx.store.listEvents(project.id, {}, { limit: 10 })).map((e) => e.type)).toEqual([
      'automation.run_exited',
    ]);
    expect(await ctx.store.getRun(project.id, run.id)).toMatchObject({ status: 'exited', entryKey: run.id });
    const next = makeRun(workflow, a, { entryKey: 'active' });
    expect((await start(next)).started.map((r) => r.id)).toEqual([next.id]);
  });

  it('erases a contact: its events and runs go, another contact’s and project’s stay', async () => {
    const { project, workflow } = await seedWorkflow();
    const [a, b] = addresses(2) as [string, string];
    await start(makeRun(workflow, a));
    await start(makeRun(workflow, b));
    expect(await ctx.store.eraseAutomationContact(project.id, a)).toBe(2);
    expect(await ctx.store.eraseAutomationContact(project.id, a)).toBe(0);
    expect(await ctx.store.findEvents(project.id, a, ['cart.abandoned'], testTime(), 10)).toEqual([]);
    expect((await ctx.store.listRuns(project.id, workflow.id, { limit: 10 })).map((r) => r.contact)).toEqual([
      b,
    ]);
    // The slot of a run erased is free again.
    expect((await start(makeRun(workflow, a, { entryKey: 'once' }))).started).toHaveLength(1);
  });

  it('makes the active runs of a deleted workflow due at once', async () => {
    const { project, workflow } = await seedWorkflow();
    const run = makeRun(workflow, 'a@example.com', { dueAt: testTime(86_400_000) });
    await start(run);
    expect(await ctx.store.claimRuns({ now: testTime(5), limit: 5, leaseMs: 1000 })).toEqual([]);
    await ctx.store.setWorkflowStatus(project.id, workflow.id, 'deleted', testTime(5));
    expect(
      (await ctx.store.claimRuns({ now: testTime(5), limit: 5, leaseMs: 1000 })).map((r) => r.id),
    ).toEqual([run.id]);
  });

  it('lists a workflow’s runs newest first by page, and counts them per step and status', async () => {
    const { project, workflow } = await seedWorkflow();
    const { project: other } = await seedProject(ctx.store);
    const runs = addresses(5).map((c, i) =>
      makeRun(workflow, c, { startedAt: testTime(i), step: i < 3 ? 'a' : 'b' }),
    );
    for (const run of runs) await start(run);
    const page1 = await ctx.store.listRuns(project.id, workflow.id, { limit: 2 });
    expect(page1.map((r) => r.id)).toEqual([runs[4]?.id, runs[3]?.id]);
    const page2 = await ctx.store.listRuns(project.id, workflow.id, {
      limit: 10,
      after: page1[1]?.id ?? null,
    });
    expect(page2.map((r) => r.id)).toEqual([runs[2]?.id, runs[1]?.id, runs[0]?.id]);
    expect(await ctx.store.listRuns(other.id, workflow.id, { limit: 10 })).toEqual([]);
    expect(await ctx.store.listRuns(project.id, workflow.id, { limit: 10, status: 'completed' })).toEqual([]);
    expect(await ctx.store.countRuns(project.id, workflow.id)).toEqual({
      atStep: { a: 3, b: 2 },
      active: 5,
      completed: 0,
      exited: 0,
    });
    expect(await ctx.store.getRun(other.id, runs[0]?.id as string)).toBeUndefined();
  });

  it('counts runs per step: entered with the run’s start, its moves with its fenced writes, an erased active run as exited', async () => {
    const { project, workflow } = await seedWorkflow();
    const { project: other } = await seedProject(ctx.store);
    const runs = addresses(4).map((c) => makeRun(workflow, c));
    for (const run of runs) await start(run);
    // A repeated start (its entry key taken) counts nothing.
    await ctx.store.trackEvent({
      event: makeAutomationEvent(project.id, runs[0]?.contact as string),
      runs: [
        { run: { ...makeRun(workflow, runs[0]?.contact as string), entryKey: runs[0]?.entryKey as string } },
      ],
    });
    expect(await ctx.store.countSteps(project.id, workflow.id)).toEqual({
      a: { entered: 4, passed: 0, exited: 0 },
    });
    const claimed = await ctx.store.claimRuns({ now: testTime(1), limit: 10, leaseMs: 60_000 });
    expect(claimed).toHaveLength(4);
    const [one, two, three] = claimed.sort((x, y) => (x.id < y.id ? -1 : 1));
    if (!one || !two || !three) throw new Error('claimed fewer runs');
    const opts = (run: typeof one, moves: Parameters<typeof ctx.store.advanceRun>[3]['moves']) => ({
      release: true,
      wakeSeq: run.wakeSeq,
      now: testTime(2),
      moves,
    });
    // a -> b -> c in one write; another a -> b; a third exits at a.
    const toC = advanceOf(one, { step: 'c' });
    const aToB = [
      { step: 'a', kind: 'passed' },
      { step: 'b', kind: 'entered' },
    ] as const;
    const bToC = [
      { step: 'b', kind: 'passed' },
      { step: 'c', kind: 'entered' },
    ] as const;
    expect(await ctx.store.advanceRun(one.id, one.leaseToken, toC, opts(one, [...aToB, ...bToC]))).toBe(true);
    expect(
      await ctx.store.advanceRun(two.id, two.leaseToken, advanceOf(two, { step: 'b' }), opts(two, aToB)),
    ).toBe(true);
    const exited = advanceOf(three, {
      status: 'exited',
      step: null,
      dueAt: null,
      endReason: 'exit-step',
      endedAt: testTime(2),
    });
    expect(
      await ctx.store.advanceRun(
        three.id,
        three.leaseToken,
        exited,
        opts(three, [{ step: 'a', kind: 'exited' }]),
      ),
    ).toBe(true);
    // A stale token writes no move.
    expect(
      await ctx.store.advanceRun(
        three.id,
        three.leaseToken,
        exited,
        opts(three, [{ step: 'a', kind: 'exited' }]),
      ),
    ).toBe(false);
    expect(await ctx.store.countSteps(project.id, workflow.id)).toEqual({
      a: { entered: 4, passed: 2, exited: 1 },
      b: { entered: 2, passed: 1, exited: 0 },
      c: { entered: 1, passed: 0, exited: 0 },
    });
    // Erasing the contact of the run at b: exited at b; an ended run's erasure changes no count.
    expect(await ctx.store.eraseAutomationContact(project.id, two.contact)).toBeGreaterThan(0);
    expect(await ctx.store.eraseAutomationContact(project.id, three.contact)).toBeGreaterThan(0);
    expect(await ctx.store.countSteps(project.id, workflow.id)).toEqual({
      a: { entered: 4, passed: 2, exited: 1 },
      b: { entered: 2, passed: 1, exited: 1 },
      c: { entered: 1, passed: 0, exited: 0 },
    });
    expect(await ctx.store.countSteps(other.id, workflow.id)).toEqual({});
  });
}
