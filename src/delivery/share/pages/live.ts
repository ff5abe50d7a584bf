import { contentHash } from "./style.js";

/**
 * The browser side of a running analysis's shared page. The server renders the finished page
 * itself, so the script only has to show progress and quotes as they arrive, then reload once the
 * analysis ends. It is a file of our own origin (the CSP allows `script-src 'self'` only) and
 * touches no inline style: it sets text, classes and the `hidden` attribute.
 *
 * The markup it expects (analysis.ts renders it): an element `[data-events]` holding the stream's
 * path, with a `<progress>`, a status `[data-live-status]` inside an aria-live region, a hidden
 * `[data-live-reload]` button, a hidden heading `[data-live-quotes-heading]` and a list
 * `[data-live-quotes]`.
 *
 * Two subtleties:
 * - `error` is both the server's named event (a MessageEvent with data: the analysis failed) and
 *   EventSource's own connection error (no data). Only the first ends the analysis; the second is
 *   retried by the browser until it gives up (readyState CLOSED, e.g. the link expired: 404).
 * - The page reloads on `result`/`error`. If the reloaded page still says "running" (the stored
 *   record lagging behind the event), the stream replays the same final event and the page would
 *   reload forever; a per-tab counter stops after three reloads and asks the reader instead.
 */
export const LIVE_SCRIPT_PATH = "/assets/share-live.js";

export const LIVE_SCRIPT = `(function () {
  "use strict";
  var root = document.querySelector("[data-events]");
  if (!root) return;
  var path = root.getAttribute("data-events") || "";
  var bar = root.querySelector("progress");
  var status = root.querySelector("[data-live-status]");
  var reloadButton = root.querySelector("[data-live-reload]");
  var heading = root.querySelector("[data-live-quotes-heading]");
  var list = root.querySelector("[data-live-quotes]");
  var say = function (text) { if (status) status.textContent = text; };
  var offerReload = function (text) {
    say(text);
    if (reloadButton) reloadButton.hidden = false;
  };
  if (reloadButton) reloadButton.addEventListener("click", function () { location.reload(); });
  // Only a path of this origin: the attribute is ours, but a stream elsewhere would leak the reader.
  if (path.charAt(0) !== "/" || path.charAt(1) === "/" || typeof EventSource !== "function") {
    offerReload("Live updates are not available; reload the page to see the result.");
    return;
  }

  var source = new EventSource(path);
  var finished = false;
  var reconnecting = false;
  source.addEventListener("open", function () {
    if (reconnecting) { reconnecting = false; say("Reconnected; waiting for the next step\\u2026"); }
  });
  var shown = {};
  var parse = function (event) {
    try { return JSON.parse(event.data); } catch (e) { return null; }
  };
  var stepName = function (step) { return String(step).replace(/_/g, " "); };

  source.addEventListener("progress", function (event) {
    var data = parse(event);
    if (!data) return;
    var text = "Running";
    if (typeof data.step === "string" && data.step) text += ": " + stepName(data.step);
    if (typeof data.progress === "number" && isFinite(data.progress)) {
      var value = Math.max(0, Math.min(1, data.progress));
      if (bar) { bar.value = value; bar.textContent = Math.round(value * 100) + "%"; }
      text += " (" + Math.round(value * 100) + "%)";
    }
    say(text);
  });

  source.addEventListener("evidence", function (event) {
    var data = parse(event);
    if (!data || typeof data.quote !== "string" || !list) return;
    // A reconnect resumes after the last event id, but a replay must still not show a quote twice.
    var key = String(data.number);
    if (shown[key]) return;
    shown[key] = true;
    var item = document.createElement("li");
    var figure = document.createElement("figure");
    figure.className = "quote";
    var quote = document.createElement("blockquote");
    quote.textContent = data.quote;
    var caption = document.createElement("figcaption");
    var parts = [];
    if (typeof data.number === "number") parts.push("[" + data.number + "]");
    if (typeof data.platform === "string" && data.platform) parts.push(data.platform);
    if (typeof data.author === "string" && data.author) parts.push(data.author);
    caption.textContent = parts.join(" \\u00b7 ");
    figure.appendChild(quote);
    figure.appendChild(caption);
    item.appendChild(figure);
    list.appendChild(item);
    if (heading) heading.hidden = false;
  });

  var finish = function (text) {
    if (finished) return;
    finished = true;
    source.close();
    var key = "share-live-reloads:" + path;
    var count = 0;
    try { count = Number(sessionStorage.getItem(key)) || 0; sessionStorage.setItem(key, String(count + 1)); } catch (e) {}
    if (count >= 3) { offerReload("The analysis has ended; reload the page to see it."); return; }
    say(text);
    location.reload();
  };

  source.addEventListener("result", function () { finish("The analysis has finished. Loading the result\\u2026"); });
  source.addEventListener("error", function (event) {
    if (typeof event.data === "string") { finish("The analysis has stopped. Loading the details\\u2026"); return; }
    if (finished) return;
    if (source.readyState === EventSource.CLOSED) offerReload("Live updates stopped; reload the page.");
    else { reconnecting = true; say("Connection lost; reconnecting\\u2026"); }
  });
})();
`;

export const LIVE_SCRIPT_HASH = contentHash(LIVE_SCRIPT);
export const LIVE_SCRIPT_SRC = `${LIVE_SCRIPT_PATH}?v=${LIVE_SCRIPT_HASH}`;
