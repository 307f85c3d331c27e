// A match page that waits: poll the match's status (GET /api/v1/matches/<id>/status/) every few seconds
// and reload the page when its state changes (waiting → queued → running with the live view → the replay),
// so nobody has to reload by hand. Stops polling once the match is over, and slows down while the tab is
// hidden or the server does not answer.
(function () {
  var line = document.getElementById("match-state");
  if (!line) { return; }
  var url = line.getAttribute("data-status-url");
  var seen = [line.getAttribute("data-status"), line.getAttribute("data-live"), line.getAttribute("data-replay")].join("/");
  var delay = 3000;
  function schedule(ms) { window.setTimeout(poll, document.hidden ? Math.max(ms, 15000) : ms); }
  function poll() {
    fetch(url, { headers: { "Accept": "application/json" }, credentials: "same-origin" })
      .then(function (r) { if (!r.ok) { throw new Error("status " + r.status); } return r.json(); })
      .then(function (s) {
        var now = [s.status, s.live ? "1" : "0", s.has_replay ? "1" : "0"].join("/");
        if (now !== seen) { window.location.reload(); return; }
        delay = 3000;
        schedule(delay);
      })
      .catch(function () { delay = Math.min(delay * 2, 30000); schedule(delay); });
  }
  schedule(delay);
})();
