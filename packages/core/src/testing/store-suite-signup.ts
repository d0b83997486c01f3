/** Store conformance: the SignupStore role (signup forms, signups and their confirmation). */
import { expect, it } from 'vitest';
import type { FormRecord, SignupRecord } from '../store/signup-records.js';
import { makeGroup, testId, testTime } from './store-fixtures.js';
import { makeConsentRecord } from './store-suite-consent-fixtures.js';
import { addresses, expectStoreError, type StoreSuiteContext, seedProject } from './store-suite-helpers.js';

/** A test signup form. */
export function makeForm(projectId: string, overrides: Partial<FormRecord> = {}): FormRecord {
  return {
    ref: testId('frm'),
    projectId,
    name: 'Newsletter <b>ç</b>',
    groupRef: 'readers',
    topicKey: 'news',
    allowedOrigins: ['https://www.example.com'],
    consentTexts: [{ version: 1, text: 'Send me news <i>ç</i>', createdAt: testTime() }],
    sender: 'news@example.com',
    confirmTemplateRef: null,
    createdAt: testTime(),
    updatedAt: testTime(),
    ...overrides,
  };
}

/** A test signup, pending and never mailed. */
export function makeSignup(
  projectId: string,
  formRef: string,
  address: string,
  overrides: Partial<SignupRecord> = {},
): SignupRecord {
  return {
    id: testId('sgn'),
    projectId,
    formRef,
    address,
    consentVersion: 1,
    status: 'pending',
    createdAt: testTime(),
    sentAt: null,
    confirmedAt: null,
    ...overrides,
  };
}

/** Registers the tests of signup forms and signups. */
export function describeSignup(ctx: StoreSuiteContext): void {
  it('creates, finds, lists, replaces and deletes forms; a ref is unique; scoped by project', async () => {
    const { project } = await seedProject(ctx.store);
    const { project: other } = await seedProject(ctx.store);
    const form = makeForm(project.id);
    const second = makeForm(project.id, {
      groupRef: null,
      allowedOrigins: [],
      confirmTemplateRef: 'confirm',
    });
    await ctx.store.createForm(form);
    await ctx.store.createForm(second);
    await expectStoreError(ctx.store.createForm({ ...form, projectId: other.id }), 'CONFLICT', [form.ref]);
    expect(await ctx.store.findForm(form.ref)).toEqual(form);
    expect(await ctx.store.findForm('frm_nope')).toBeUndefined();
    expect((await ctx.store.listForms(project.id)).map((f) => f.ref)).toEqual([form.ref, second.ref].sort());
    expect(await ctx.store.listForms(other.id)).toEqual([]);

    const texts = [...form.consentTexts, { version: 2, text: 'New wording', createdAt: testTime(1000) }];
    const changed = { ...form, name: 'Renamed', consentTexts: texts, updatedAt: testTime(1000) };
    expect(await ctx.store.replaceForm(changed)).toBe(true);
    expect(await ctx.store.findForm(form.ref)).toEqual(changed);
    // Another project's form is neither replaced nor deleted.
    expect(await ctx.store.replaceForm({ ...changed, projectId: other.id, name: 'Stolen' })).toBe(false);
    expect(await ctx.store.deleteForm(other.id, form.ref)).toBe(false);
    expect((await ctx.store.findForm(form.ref))?.name).toBe('Renamed');
    expect(await ctx.store.deleteForm(project.id, form.ref)).toBe(true);
    expect(await ctx.store.deleteForm(project.id, form.ref)).toBe(false);
    expect(await ctx.store.findForm(form.ref)).toBeUndefined();
  });

  it('openSignup stores one signup per (project, form, address), also when raced', async () => {
    const { project } = await seedProject(ctx.store);
    const [a, b] = addresses(2);
    const first = makeSignup(project.id, 'frm_a', a as string);
    expect(await ctx.store.openSignup(first)).toEqual(first);
    // A second signup of the address through the form gets the stored one back.
    expect(await ctx.store.openSignup(makeSignup(project.id, 'frm_a', a as string))).toEqual(first);
    expect(await ctx.store.getSignup(first.id)).toEqual(first);
    expect(await ctx.store.getSignup('sgn_nope')).toBeUndefined();
    const raced = await Promise.all(
      Array.from({ length: ctx.concurrency }, () =>
        ctx.store.openSignup(makeSignup(project.id, 'frm_a', b as string)),
      ),
    );
    expect(new Set(raced.map((s) => s.id)).size).toBe(1);
    // Another form, another signup.
    const other = await ctx.store.openSignup(makeSignup(project.id, 'frm_b', a as string));
    expect(other.id).not.toBe(first.id);
  });

  it('claimSignupSend: once per interval, exactly one winner among concurrent claims', async () => {
    const { project } = await seedProject(ctx.store);
    const signup = await ctx.store.openSignup(makeSignup(project.id, 'frm_a', 'ann@example.com'));
    const wins = await Promise.all(
      Array.from({ length: ctx.concurrency }, () =>
        ctx.store.claimSignupSend(signup.id, testTime(0), testTime(-600_000)),
      ),
    );
    expect(wins.filter(Boolean)).toHaveLength(1);
    expect((await ctx.store.getSignup(signup.id))?.sentAt).toEqual(testTime(0));
    // Five minutes later: the last send is after notAfter (now - 10 min), refused.
    expect(await ctx.store.claimSignupSend(signup.id, testTime(300_000), testTime(-300_000))).toBe(false);
    // Ten minutes later: allowed again.
    expect(await ctx.store.claimSignupSend(signup.id, testTime(600_000), testTime(0))).toBe(true);
    expect((await ctx.store.getSignup(signup.id))?.sentAt).toEqual(testTime(600_000));
    expect(await ctx.store.claimSignupSend('sgn_nope', testTime(0), testTime(0))).toBe(false);
  });

  it('confirmSignup confirms once and joins the group (once) in one go', async () => {
    const { project } = await seedProject(ctx.store);
    const group = makeGroup(project.id, 'readers', { doubleOptIn: true });
    await ctx.store.createGroup(group);
    // A group keeps its double opt-in (issue 38); one without it reads back without the field.
    expect(await ctx.store.getGroup(project.id, 'readers')).toEqual(group);
    const plain = makeGroup(project.id, 'plain');
    await ctx.store.createGroup(plain);
    expect(await ctx.store.getGroup(project.id, 'plain')).toEqual(plain);
    expect((await ctx.store.listGroups(project.id)).map((g) => g.doubleOptIn ?? false)).toEqual([
      false,
      true,
    ]);
    const signup = await ctx.store.openSignup(makeSignup(project.id, 'frm_a', 'ann@example.com'));
    // The engine writes the contact's profile with its consent; the group lists profiles.
    await ctx.store.writeConsent({
      projectId: project.id,
      address: 'ann@example.com',
      records: [],
      now: testTime(),
    });
    const results = await Promise.all(
      Array.from({ length: ctx.concurrency }, () =>
        ctx.store.confirmSignup(signup.id, testTime(5000), group.id),
      ),
    );
    expect(results.filter(Boolean)).toHaveLength(1);
    const stored = await ctx.store.getSignup(signup.id);
    expect(stored).toMatchObject({ status: 'confirmed', confirmedAt: testTime(5000) });
    const members = await ctx.store.listGroupMembers(project.id, group.id, { after: null, limit: 10 });
    expect(members.map((m) => m.address)).toEqual(['ann@example.com']);
    expect(await ctx.store.confirmSignup(signup.id, testTime(6000), group.id)).toBe(false);
    expect(await ctx.store.confirmSignup('sgn_nope', testTime(6000), null)).toBe(false);
  });

  it('keeps a record of the wording; pending is a topic state; erasure drops the signups', async () => {
    const { project } = await seedProject(ctx.store);
    const address = 'ann@example.com';
    const signup = await ctx.store.openSignup(makeSignup(project.id, 'frm_a', address));
    const record = makeConsentRecord(project.id, address, {
      change: 'signup',
      state: 'pending',
      source: 'form:frm_a',
      wording: 'v1: Send me news <i>ç</i>',
    });
    await ctx.store.writeConsent({
      projectId: project.id,
      address,
      topics: [{ topicKey: 'news', state: 'pending' }],
      records: [record],
      now: testTime(),
    });
    expect(await ctx.store.listConsentRecords(project.id, address, { limit: 10 })).toEqual([record]);
    expect(await ctx.store.findTopicStates(project.id, 'news', [address])).toMatchObject([
      { state: 'pending' },
    ]);
    await ctx.store.eraseConsent(project.id, address, 'sha256:x', makeConsentRecord(project.id, 'sha256:x'));
    expect(await ctx.store.getSignup(signup.id)).toBeUndefined();
    // The address may sign up again after its erasure.
    const again = await ctx.store.openSignup(makeSignup(project.id, 'frm_a', address));
    expect(again.id).not.toBe(signup.id);
  });

  it('listTopicMembers leaves a pending member out, of an opt-out topic too', async () => {
    const { project } = await seedProject(ctx.store);
    const group = makeGroup(project.id, 'readers');
    await ctx.store.createGroup(group);
    const [pending, plain, yes] = addresses(3);
    const states: Array<[string, 'pending' | 'subscribed' | null]> = [
      [pending as string, 'pending'],
      [plain as string, null],
      [yes as string, 'subscribed'],
    ];
    for (const [address, state] of states) {
      await ctx.store.writeConsent({
        projectId: project.id,
        address,
        topics: state ? [{ topicKey: 'news', state }] : [],
        records: [],
        now: testTime(),
      });
      const signup = await ctx.store.openSignup(makeSignup(project.id, 'frm_a', address));
      await ctx.store.confirmSignup(signup.id, testTime(), group.id);
    }
    const page = { after: null, limit: 10 };
    const optOut = await ctx.store.listTopicMembers(
      project.id,
      group.id,
      { key: 'news', defaultState: 'opt-out' },
      page,
    );
    expect(optOut.map((p) => p.address)).toEqual([plain, yes]);
    const optIn = await ctx.store.listTopicMembers(
      project.id,
      group.id,
      { key: 'news', defaultState: 'opt-in' },
      page,
    );
    expect(optIn.map((p) => p.address)).toEqual([yes]);
  });
}
