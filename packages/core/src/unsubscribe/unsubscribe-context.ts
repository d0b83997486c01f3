import type { BaseContext } from '../context/base-context.js';
import type { PreferenceCentre } from './preference-types.js';
import type { UnsubscribeLinks } from './unsubscribe-links.js';

/** What one-click unsubscribe takes: the base, and the engine's links when it has `unsubscribe`. Internal. */
export interface UnsubscribeContext extends BaseContext {
  /** One-click unsubscribe links, when the engine has the `unsubscribe` option. */
  unsubscribe?: UnsubscribeLinks;
  /** The preference centre (`{{ preferences_url }}`), with the same option. */
  preferences?: PreferenceCentre;
}
