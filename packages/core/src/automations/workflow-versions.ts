import { MailroomError } from '../base/errors.js';
import type { AutomationStore } from '../store/automation-store.js';
import type { WorkflowDefinition } from './workflow-schema.js';

/**
 * A version's definition, read once per process: a version is never changed once written, so the cache
 * needs no invalidation (it is bounded: the oldest entries go first).
 */
const cache = new Map<string, WorkflowDefinition>();
const CACHE_SIZE = 1000;

/** The definition of a workflow's version (`STORE_FAILED` if the store lost it). */
export async function definitionOf(
  store: Pick<AutomationStore, 'getWorkflowVersion'>,
  workflowId: string,
  version: number,
): Promise<WorkflowDefinition> {
  const key = `${workflowId}@${version}`;
  const hit = cache.get(key);
  if (hit) return hit;
  const record = await store.getWorkflowVersion(workflowId, version);
  if (!record) throw new MailroomError('STORE_FAILED', `workflow ${workflowId} has no version ${version}`);
  const definition = record.definition as unknown as WorkflowDefinition;
  if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value as string);
  cache.set(key, definition);
  return definition;
}
