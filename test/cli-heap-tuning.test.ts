import { describe, expect, it } from 'vitest';
import { HEAP_FLAGS, tuneHeap } from '../packages/cli/src/server/heap-tuning.js';

describe('the heap settings of the mailroom process', () => {
  it('sets every flag the process was not started with', () => {
    const set: string[] = [];
    expect(
      tuneHeap(['--conditions=mailroom-source', '--max-old-space-size=512'], (f) => set.push(f)),
    ).toEqual([...HEAP_FLAGS]);
    expect(set).toEqual(['--no-allocation-site-pretenuring', '--heap-growing-percent=100']);
  });

  it('leaves a flag given on the command line as given, in any spelling', () => {
    const set: string[] = [];
    tuneHeap(['--heap_growing_percent=50', '--allocation-site-pretenuring'], (f) => set.push(f));
    expect(set).toEqual([]);
    tuneHeap(['--no-allocation_site_pretenuring'], (f) => set.push(f));
    expect(set).toEqual(['--heap-growing-percent=100']);
  });
});
