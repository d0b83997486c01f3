export { compileTemplate } from './compile-template.js';
export {
  type ContentBodies,
  contentFromMessage,
  contentFromTemplate,
  looksLikeHtml,
} from './content-source.js';
export { htmlToText } from './html-to-text.js';
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
export { type RecipientTraits, type RenderRecipient, recipientTraits, splitName } from './recipient-scope.js';
export { renderDelivery } from './render-delivery.js';
export { singleLine } from './single-line.js';
