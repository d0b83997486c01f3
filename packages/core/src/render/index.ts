export { compileTemplate } from './compile-template.js';
export {
  type ContentBodies,
  contentFromMessage,
  contentFromTemplate,
  looksLikeHtml,
} from './content-source.js';
export { PARSE_LIMIT, RENDER_LIMIT_DEFAULTS } from './liquid-engine.js';
export { assertLiquidSyntax } from './parse-liquid.js';
export { escapeHtml, insertPreheader } from './preheader.js';
export {
  type PrepareContentOptions,
  type PreparedContent,
  type PreparedRenderOptions,
  prepareContent,
  type TextVariants,
} from './prepare-content.js';
export { renderDelivery } from './render-delivery.js';
export { singleLine } from './single-line.js';
export { htmlToText } from './text.js';
export { type RecipientTraits, type RenderRecipient, recipientTraits, splitName } from './variables.js';
