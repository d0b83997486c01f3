/**
 * The preview renderer (issue 36): renders on its own thread, the projects waiting take turns, and a
 * project over its render budget is refused with `RATE_LIMITED` and a `retryAfter` while the others
 * render on. Real worker threads; the budget's clock is a manual one.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { manualClock } from '../src/base/clock.js';
import { silentLogger } from '../src/base/logger.js';
import { createPreviewRenderer, type PreviewRenderer } from '../src/render/preview-renderer.js';
import { createPreviewThreadHost } from '../src/render/preview-thread-host.js';
import { createRenderBudget } from '../src/render/render-budget.js';
import type { ContentSnapshot } from '../src/store/records.js';

const SPIN = '{% for a in (1..3000) %}{% for b in (1..3000) %}{% endfor %}{% endfor %}';
const RECIPIENT = { address: 'ada@example.com', name: 'Ada Lovelace', variables: {}, traits: {} };

function content(html: string): ContentSnapshot {
  return {
    subject: 'Hi {{ recipient.firstName }}',
    preheader: null,
    html,
    text: null,
    variables: {},
    templateRef: null,
    templateVersion: null,
  };
}

describe('render budget', () => {
  it('refuses a project once its minute is spent, with the seconds until it is back, and refills', () => {
    const clock = manualClock();
    const budget = createRenderBudget(clock, 6_000);
    budget.check('a');
    budget.charge('a', 7_000);
    expect(() => budget.check('a')).toThrow(
      expect.objectContaining({ code: 'RATE_LIMITED', retryAfter: 10 }),
    );
    // Another project is untouched.
    budget.check('b');
    clock.advance(10_000);
    budget.check('a');
  });
});

describe('preview renderer', () => {
  let renderer: PreviewRenderer | undefined;
  afterEach(async () => {
    await renderer?.close();
  });

  it("renders off the main thread, within the limit, and another project's preview waits one render at most", async () => {
    renderer = createPreviewRenderer({
      clock: manualClock(),
      logger: silentLogger,
      strictVariables: false,
      msPerMinute: 60_000,
    });
    const ok = await renderer.render('b', content('<p>Hello {{ recipient.name }}</p>'), RECIPIENT);
    expect(ok.subject).toBe('Hi Ada');
    expect(ok.html).toContain('Hello Ada Lovelace');

    // A queues four spinning renders; B asks once after them.
    const spins = Array.from({ length: 4 }, () => renderer?.render('a', content(SPIN), RECIPIENT));
    const settled = Promise.allSettled(spins);
    // The main thread stays free while they spin: a timer fires on time.
    const tick = performance.now();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(performance.now() - tick).toBeLessThan(500);
    const started = performance.now();
    const b = await renderer.render('b', content('<p>Quick</p>'), RECIPIENT);
    const waited = performance.now() - started;
    expect(b.html).toContain('Quick');
    // One of A's renders (about 1 s, the render limit) at most, not all four.
    expect(waited).toBeLessThan(2_500);
    const results = await settled;
    expect(results.every((r) => r.status === 'rejected')).toBe(true);
    expect((results[0] as PromiseRejectedResult).reason).toMatchObject({ code: 'RENDER_FAILED' });
  }, 30_000);

  it('refuses a project over its budget (queued renders included) while another still renders', async () => {
    renderer = createPreviewRenderer({
      clock: manualClock(),
      logger: silentLogger,
      strictVariables: false,
      msPerMinute: 1_500,
    });
    const results = await Promise.allSettled(
      Array.from({ length: 4 }, () => renderer?.render('a', content(SPIN), RECIPIENT)),
    );
    const codes = results.map((r) => (r.status === 'rejected' ? (r.reason as { code: string }).code : 'ok'));
    // Two renders of about 1 s spend 1.5 s; what still waited then is refused, not run.
    expect(codes.filter((c) => c === 'RENDER_FAILED').length).toBeGreaterThanOrEqual(1);
    expect(codes.filter((c) => c === 'RENDER_FAILED').length).toBeLessThanOrEqual(2);
    expect(codes).toContain('RATE_LIMITED');
    await expect(renderer.render('a', content('<p>x</p>'), RECIPIENT)).rejects.toMatchObject({
      code: 'RATE_LIMITED',
      retryAfter: expect.any(Number),
    });
    expect((await renderer.render('b', content('<p>still</p>'), RECIPIENT)).html).toContain('still');
  }, 30_000);

  it('stops a render that holds the thread past the hard limit, and starts a new thread', async () => {
    const host = createPreviewThreadHost();
    renderer = createPreviewRenderer({
      clock: manualClock(),
      logger: silentLogger,
      strictVariables: false,
      hardLimitMs: 300,
      host,
    });
    await expect(renderer.render('a', content(SPIN), RECIPIENT)).rejects.toMatchObject({
      code: 'RENDER_FAILED',
      message: expect.stringContaining('300 ms'),
    });
    expect((await renderer.render('a', content('<p>after</p>'), RECIPIENT)).html).toContain('after');
    expect(host.started).toBe(2);
  }, 30_000);
});

describe('preview renderer, the first check', () => {
  let renderer: PreviewRenderer | undefined;
  afterEach(async () => {
    await renderer?.close();
  });

  // The suite's flake of stop 46: on a busy machine, loading MJML with a thread's first check took longer
  // than the hard limit, and a plain template was refused "Rendering took longer than 5000 ms".
  it('does not count loading MJML against the template: neither its hard limit nor its budget', async () => {
    const charged: number[] = [];
    const budget = createRenderBudget(manualClock(), 60_000);
    renderer = createPreviewRenderer({
      clock: manualClock(),
      logger: silentLogger,
      strictVariables: false,
      // A thread of its own: the process's may have loaded MJML for another engine already.
      host: createPreviewThreadHost(),
      budget: {
        ...budget,
        charge(projectId, ms) {
          charged.push(ms);
          budget.charge(projectId, ms);
        },
      },
    });
    const mjml =
      '<mjml><mj-body><mj-section><mj-column><mj-text>Hi</mj-text></mj-column></mj-section></mj-body></mjml>';
    const started = performance.now();
    const checked = await renderer.check('a', { format: 'mjml', source: mjml, subject: 'Hi', name: 'first' });
    const wall = performance.now() - started;
    expect(checked).toBeDefined();
    // Loading MJML is most of the first check's time (its compile of this source, a few milliseconds):
    // the project is charged the compile only.
    console.log(`first MJML check: ${wall.toFixed(0)} ms in all, ${charged[0]?.toFixed(1)} ms charged`);
    expect(charged).toHaveLength(1);
    expect(charged[0]).toBeLessThan(wall / 2);
  }, 30_000);

  // The same flake again in session 16's CI: the hard limit restarted only once MJML had loaded, so a load
  // longer than the limit (seconds on a machine at 100 % CPU) still stopped the first check. A limit far
  // below the load's time shows it on any machine; the compile of this source takes a few ms.
  it('lets the first check load MJML for longer than the hard limit', async () => {
    renderer = createPreviewRenderer({
      clock: manualClock(),
      logger: silentLogger,
      strictVariables: false,
      hardLimitMs: 250,
      host: createPreviewThreadHost(),
    });
    const mjml =
      '<mjml><mj-body><mj-section><mj-column><mj-text>Hi</mj-text></mj-column></mj-section></mj-body></mjml>';
    const started = performance.now();
    const checked = await renderer.check('a', { format: 'mjml', source: mjml, subject: 'Hi', name: 'first' });
    console.log(
      `first MJML check with a 250 ms limit: ${(performance.now() - started).toFixed(0)} ms in all`,
    );
    expect(checked).toBeDefined();
    // A template that runs away is still stopped at the limit once MJML is loaded.
    await expect(renderer.render('a', content(SPIN), RECIPIENT)).rejects.toMatchObject({
      code: 'RENDER_FAILED',
      message: expect.stringContaining('250 ms'),
    });
  }, 30_000);
});

describe('preview thread shared by the engines of a process', () => {
  const renderers: PreviewRenderer[] = [];
  afterEach(async () => {
    await Promise.all(renderers.splice(0).map((r) => r.close()));
  });
  const open = (host: ReturnType<typeof createPreviewThreadHost>, hardLimitMs?: number) => {
    const renderer = createPreviewRenderer({
      clock: manualClock(),
      logger: silentLogger,
      strictVariables: false,
      msPerMinute: 60_000,
      host,
      ...(hardLimitMs ? { hardLimitMs } : {}),
    });
    renderers.push(renderer);
    return renderer;
  };

  it("starts one thread for two engines, and one engine's preview waits one render of the other's at most", async () => {
    const host = createPreviewThreadHost();
    const one = open(host);
    const two = open(host);
    expect((await one.render('a', content('<p>one</p>'), RECIPIENT)).html).toContain('one');
    expect((await two.render('a', content('<p>two</p>'), RECIPIENT)).html).toContain('two');
    expect(host.started).toBe(1);
    // Engine one queues four spinning renders (about 1 s each, the render limit); engine two asks after them.
    const spins = Promise.allSettled(
      Array.from({ length: 4 }, () => one.render('a', content(SPIN), RECIPIENT)),
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    const started = performance.now();
    expect((await two.render('b', content('<p>Quick</p>'), RECIPIENT)).html).toContain('Quick');
    expect(performance.now() - started).toBeLessThan(2_500);
    expect((await spins).every((r) => r.status === 'rejected')).toBe(true);
    // Closing one engine leaves the thread to the other.
    await one.close();
    expect((await two.render('a', content('<p>still</p>'), RECIPIENT)).html).toContain('still');
    expect(host.started).toBe(1);
  }, 30_000);

  it('gives an engine opened after the last one closed the same, loaded, thread', async () => {
    const host = createPreviewThreadHost();
    const mjml =
      '<mjml><mj-body><mj-section><mj-column><mj-text>Hi</mj-text></mj-column></mj-section></mj-body></mjml>';
    const first = open(host);
    expect(
      (await first.check('a', { format: 'mjml', source: mjml, subject: null, name: 'm' })).problems,
    ).toEqual([]);
    await first.close();
    const next = open(host);
    expect(
      (await next.check('a', { format: 'mjml', source: mjml, subject: null, name: 'm' })).problems,
    ).toEqual([]);
    expect(host.started).toBe(1);
    expect(host.loads).toBe(1);
  }, 30_000);

  it("stops the thread at one engine's hard limit; the other's next preview gets a new thread", async () => {
    const host = createPreviewThreadHost();
    const one = open(host, 300);
    const two = open(host);
    const stopped = one.render('a', content(SPIN), RECIPIENT);
    const after = two.render('a', content('<p>after</p>'), RECIPIENT);
    await expect(stopped).rejects.toMatchObject({
      code: 'RENDER_FAILED',
      message: expect.stringContaining('300 ms'),
    });
    expect((await after).html).toContain('after');
    expect(host.started).toBe(2);
  }, 30_000);

  it('checks HTML and text without loading MJML; the first MJML check loads it', async () => {
    const host = createPreviewThreadHost();
    const renderer = open(host, 250);
    const html = await renderer.check('a', {
      format: 'html',
      source: '<p>{{ x }}</p>',
      subject: 'Hi',
      name: 'h',
    });
    expect(html).toEqual({ compiled: '<p>{{ x }}</p>', problems: [] });
    expect(
      await renderer.check('a', { format: 'text', source: 'Hi {{ x }}', subject: null, name: 't' }),
    ).toEqual({
      compiled: 'Hi {{ x }}',
      problems: [],
    });
    expect((await renderer.render('a', content('<p>x</p>'), RECIPIENT)).html).toContain('x');
    expect(host.loads).toBe(0);
    const mjml =
      '<mjml><mj-body><mj-section><mj-column><mj-text>Hi</mj-text></mj-column></mj-section></mj-body></mjml>';
    const checked = await renderer.check('a', { format: 'mjml', source: mjml, subject: 'Hi', name: 'm' });
    expect(checked.problems).toEqual([]);
    expect(checked.compiled).toContain('Hi');
    expect(host.loads).toBe(1);
    // Loaded once per thread, not per check.
    await renderer.check('a', { format: 'mjml', source: mjml, subject: null, name: 'm2' });
    expect(host.loads).toBe(1);
    expect(host.started).toBe(1);
  }, 30_000);
});
