/**
 * The HTML of the shared pages (`/share/{token}`): pure functions from a page model to a
 * document, and the two static assets the documents reference.
 */
export { renderAnalysisPage } from "./analysis.js";
export { renderEntityPage } from "./entity.js";
export { renderKnowledgePage } from "./knowledge.js";
export { LIVE_SCRIPT, LIVE_SCRIPT_HASH, LIVE_SCRIPT_PATH, LIVE_SCRIPT_SRC } from "./live.js";
export type { AnalysisPageModel, EntityPageModel, KnowledgePageModel, LinkFrame, ThemeSourcesPageModel } from "./model.js";
export { renderNotFoundPage, renderTooManyRequestsPage } from "./not-found.js";
export { STYLESHEET, STYLESHEET_HASH, STYLESHEET_HREF, STYLESHEET_PATH } from "./style.js";
export { renderThemeSourcesPage } from "./theme.js";
