import { type Capability, storeRole } from '../context/capability.js';
import type { AutomationStore } from '../store/automation-store.js';
import type { AutomationsEngineOptions, AutomationsFacade } from './automation-types.js';
import { createAutomationsApi } from './automations-api.js';
import { createRunWorker } from './run-worker.js';

/**
 * Automations (issue 39), plugged into the engine through the capability seam: the store's
 * `AutomationStore` role, `mailroom.track` and `mailroom.automations`, the run worker (a task beside the
 * delivery worker), the `automationRunStarted` and `automationRunEnded` events. Messages go through the
 * engine's `send` (`CapabilitySetup.send`), so every rule of a send applies.
 */
export const automationsCapability: Capability<AutomationsEngineOptions, AutomationsFacade, object> = {
  name: 'automations',
  storeRole: storeRole<AutomationStore>()(
    'createWorkflow',
    'getWorkflow',
    'listWorkflows',
    'findTriggered',
    'getWorkflowVersion',
    'writeWorkflowVersion',
    'setWorkflowStatus',
    'trackEvent',
    'findEvents',
    'claimRuns',
    'advanceRun',
    'getRun',
    'listRuns',
    'countRuns',
    'countSteps',
    'eraseAutomationContact',
  ),
  create({ ctx, resolveAuth, send }, options) {
    const worker = createRunWorker({ ctx, send }, options.automations);
    return { facade: createAutomationsApi(ctx, { resolveAuth, worker }), provides: {}, task: worker };
  },
};
