/**
 * The preview renderer (issue 36): renders on its own thread, the projects waiting take turns, and a
 * project over its render budget is refused with `RATE_LIMITED` and a `retryAfter` while the others
 * render on. Real worker threads; the budget's clock is a manual one.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { manualClock } from '../src/base/clock.js';
import { silentLogger } from '../src/base/logger.js';
import { createPreviewRenderer, type PreviewRenderer } from '../src/render/preview-renderer.js';
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
    renderer = createPreviewRenderer({
      clock: manualClock(),
      logger: silentLogger,
      strictVariables: false,
      hardLimitMs: 300,
    });
    await expect(renderer.render('a', content(SPIN), RECIPIENT)).rejects.toMatchObject({
      code: 'RENDER_FAILED',
      message: expect.stringContaining('300 ms'),
    });
    expect((await renderer.render('a', content('<p>after</p>'), RECIPIENT)).html).toContain('after');
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
