import type { ProfileFields, ProfileUpsertOptions, Variables } from '@mailroom/core';
import { distinctLabels, mergeProfile, newProfile } from '@mailroom/core';
import { describe, expect, it } from 'vitest';

const PRESERVE: ProfileUpsertOptions = { onExistingProfile: 'preserve', onExistingTrait: 'preserve' };
const OVERRIDE: ProfileUpsertOptions = { onExistingProfile: 'override', onExistingTrait: 'override' };

describe('the profile-merge rule', () => {
  it('a new profile takes the row as given, its labels once each', () => {
    expect(newProfile({ address: 'a@x.test' })).toEqual({ name: null, traits: {}, labels: [] });
    expect(
      newProfile({ address: 'a@x.test', name: 'Ann', traits: { n: 1 }, labels: ['b', 'a', 'b'] }),
    ).toEqual({ name: 'Ann', traits: { n: 1 }, labels: ['b', 'a'] });
  });

  it('distinctLabels keeps the array itself when it has no repeat', () => {
    const labels = ['x', 'y'];
    expect(distinctLabels(labels)).toBe(labels);
    expect(distinctLabels(['x', 'y', 'x', 'z', 'y'])).toEqual(['x', 'y', 'z']);
  });

  it('a trait is present only as an own key, whatever its name', () => {
    const stored: ProfileFields = { name: null, traits: { plan: 'free' }, labels: [] };
    const odd = JSON.parse('{"constructor": "c", "toString": "t", "__proto__": "p"}') as Variables;
    const merged = mergeProfile(stored, { address: 'a@x.test', traits: odd }, PRESERVE);
    expect(merged.changed).toBe(true);
    expect(Object.keys(merged.traits).sort()).toEqual(['__proto__', 'constructor', 'plan', 'toString']);
    expect(Object.getPrototypeOf(merged.traits)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(merged.traits, '__proto__')?.value).toBe('p');
    expect(stored.traits).toEqual({ plan: 'free' });
  });

  it('changed only when a field differs; the result is then the stored fields themselves', () => {
    const stored: ProfileFields = { name: 'Ann', traits: { plan: 'free', deep: { a: [1] } }, labels: ['x'] };
    const same = mergeProfile(
      stored,
      { address: 'a@x.test', name: 'Ann', traits: { deep: { a: [1] }, plan: 'free' }, labels: ['x', 'x'] },
      OVERRIDE,
    );
    expect(same).toEqual({ ...stored, changed: false, skippedTraits: 0 });
    expect(same.traits).toBe(stored.traits);
    expect(same.labels).toBe(stored.labels);
    expect(
      mergeProfile(stored, { address: 'a@x.test', name: 'Bob', traits: { plan: 'pro' } }, PRESERVE),
    ).toEqual({ ...stored, changed: false, skippedTraits: 0 });
    expect(mergeProfile(stored, { address: 'a@x.test', name: null }, OVERRIDE).changed).toBe(false);
  });

  it('name, traits and labels merge by their own rules', () => {
    const stored: ProfileFields = { name: null, traits: { plan: 'free', keep: 1 }, labels: ['x'] };
    expect(
      mergeProfile(
        stored,
        { address: 'a@x.test', name: 'Ann', traits: { plan: 'pro', city: 'Oslo' }, labels: ['y', 'x', 'y'] },
        PRESERVE,
      ),
    ).toEqual({
      name: 'Ann',
      traits: { plan: 'free', keep: 1, city: 'Oslo' },
      labels: ['x', 'y'],
      changed: true,
      skippedTraits: 0,
    });
    expect(
      mergeProfile(
        { ...stored, name: 'Old' },
        { address: 'a@x.test', name: 'New', traits: { plan: 'pro' } },
        OVERRIDE,
      ),
    ).toEqual({
      name: 'New',
      traits: { plan: 'pro', keep: 1 },
      labels: ['x'],
      changed: true,
      skippedTraits: 0,
    });
  });
});
