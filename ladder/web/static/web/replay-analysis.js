/* The match analysis on the match page (the #analysis panel, ladder/analysis/templates/analysis/_analysis_panel.html).

   - "Analyse this match" (shown to a seated bot's owner and staff) POSTs /api/v1/matches/<id>/analysis/ with
     the page's CSRF token; a refusal's reason (a bound reached, ...) is shown in the panel's status line.
   - While the analysis is queued or running, the panel polls the same URL (GET) and shows its progress.
   - Once done: the decisions that lost the most (the server's `worst`, at most five) are listed in the panel
     and marked in the replay's move list (the move's link gets `rv-analysis-lost` and a title, a flag after
     it says how much was lost), and when the viewer shows such a move (the step before it or after it), a
     note beside the board says "Better: <the best move in words> (estimated +X)"; and a graph beside the
     score graph plots each seat's estimated lead over its best rival at its decisions (the value of the move
     it played), clickable to go to a step, its cursor following the viewer.
   The marks are the same in every view (the match is over: its record is public). It reads the viewer
   only through the DOM (#viewer's data-moves and
   data-rendered-step, the move list's a.rv-move[data-step]) and moves it through CaravanReplay.viewer.show.
   Words are set as text, never as HTML. Vanilla JS, no build. */
(function () {
  "use strict";
  var panel = document.getElementById("analysis");
  if (!panel) return;
  var url = panel.getAttribute("data-analysis-url");
  var button = document.getElementById("analysis-request");
  var box = document.getElementById("analysis-progress-box");
  var bar = document.getElementById("analysis-progress");
  var stateLine = document.getElementById("analysis-state");
  var worstList = document.getElementById("analysis-worst");
  var tokenInput = panel.querySelector("input[name=csrfmiddlewaretoken]");
  var POLL_MS = 1500;
  var worst = [];  // the reviews of the decisions that lost the most, worst first
  var reviews = [];  // every review, in play order
  var timer = null;

  function number(value) {
    var v = Math.abs(value);
    return v >= 10 ? v.toFixed(0) : v >= 1 ? v.toFixed(1) : v.toFixed(2);
  }
  function signed(value) { return (value < 0 ? "−" : "+") + number(value); }
  function seatName(seat) {
    var option = document.querySelector('#rv-seat option[value="' + seat + '"]');
    var text = option ? option.textContent : "";
    var dash = text.indexOf("— ");
    return (dash >= 0 ? text.slice(dash + 2) + " " : "") + "(seat " + seat + ")";
  }
  function better(review) { return "Better: " + review.best_words + " (estimated +" + number(review.loss) + ")"; }
  function moveTitle(review) {
    return "Lost an estimated " + number(review.loss) + " (one of the decisions that lost the most). Played: " +
      review.played_words + ". " + better(review);
  }

  function get() {
    return fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (r) { return r.json().then(function (body) { return { ok: r.ok, body: body }; }); });
  }

  function render(body) {
    if (timer) { clearTimeout(timer); timer = null; }
    panel.setAttribute("data-status", body.status);
    var open = body.status === "QUEUED" || body.status === "RUNNING";
    box.hidden = !open;
    if (button) {
      button.hidden = !(body.may_request && (body.status === "none" || body.status === "FAILED"));
      button.disabled = false;
      if (body.status === "FAILED") button.textContent = "Analyse this match again";
    }
    if (open) {
      bar.max = Math.max(1, body.decisions_total);
      bar.value = body.decisions_done;
      stateLine.textContent = body.status === "QUEUED" ? "Queued: waiting for the analysis worker…"
        : "Analysing: " + body.decisions_done + " of " + (body.decisions_total || "?") + " decisions…";
      timer = setTimeout(poll, POLL_MS);
    } else if (body.status === "FAILED") {
      stateLine.textContent = "The analysis failed: " + body.reason;
    } else if (body.status === "DONE") {
      done(body);
    } else {
      stateLine.textContent = "";
    }
  }

  function done(body) {
    var bySteps = {};
    body.reviews.forEach(function (r) { bySteps[r.step] = r; });
    reviews = body.reviews;
    worst = body.worst.map(function (step) { return bySteps[step]; }).filter(Boolean);
    var line = "The search level analysed " + body.reviews.length + " decisions" +
      (body.decisions_in_match > body.decisions_total ? " (the first " + body.decisions_total + " of " + body.decisions_in_match + ")" : "") +
      " in " + body.cpu_seconds.toFixed(1) + " CPU seconds. ";
    stateLine.textContent = line + (worst.length
      ? "The " + worst.length + " that lost the most are marked in the move list:"
      : "No decision lost anything by its estimate.");
    worstList.innerHTML = "";
    worst.forEach(function (r) {
      var item = document.createElement("li");
      var link = document.createElement("a");
      link.href = "?step=" + (r.step + 1) + "#replay";
      link.setAttribute("data-step", String(r.step + 1));
      link.textContent = "Move " + (r.step + 1) + ", " + seatName(r.seat) + ": " + r.played_words;
      item.appendChild(link);
      item.appendChild(document.createTextNode(". " + better(r)));
      worstList.appendChild(item);
    });
    worstList.hidden = !worst.length;
    mark();
    note();
    graph();
  }

  function poll() {
    get().then(function (got) {
      if (got.ok) render(got.body);
      else stateLine.textContent = "The analysis is unavailable: " + (got.body.detail || "error");
    }).catch(function () { timer = setTimeout(poll, POLL_MS * 4); });
  }

  // The move list's marks: the link of move N + 1 (the step after decision N) and a flag after it.
  function mark() {
    document.querySelectorAll(".rv-analysis-flag").forEach(function (flag) { flag.parentNode.removeChild(flag); });
    document.querySelectorAll("a.rv-move.rv-analysis-lost").forEach(function (link) {
      link.classList.remove("rv-analysis-lost");
      link.removeAttribute("title");
    });
    worst.forEach(function (r) {
      var link = document.querySelector('#rv-moves a.rv-move[data-step="' + (r.step + 1) + '"]');
      if (!link) return;
      link.classList.add("rv-analysis-lost");
      link.title = moveTitle(r);
      var flag = document.createElement("span");
      flag.className = "rv-analysis-flag";
      flag.title = moveTitle(r);
      flag.textContent = "⚑ −" + number(r.loss);
      link.parentNode.insertBefore(flag, link.nextSibling);
    });
    var viewer = document.getElementById("viewer");
    if (viewer) viewer.setAttribute("data-analysis-marks", String(document.querySelectorAll(".rv-analysis-flag").length));
  }

  // The note beside the board at a marked decision: the step it was taken in, and the step after it.
  function note() {
    var viewer = document.getElementById("viewer");
    var side = viewer ? viewer.querySelector(".rv-side") : null;
    if (!side) return;
    var el = document.getElementById("rv-analysis-note");
    if (!el) {
      el = document.createElement("section");
      el.id = "rv-analysis-note";
      el.className = "rv-panel rv-analysis-note";
      el.setAttribute("aria-label", "analysis of this move");
      el.setAttribute("aria-live", "polite");
      el.hidden = true;
      side.insertBefore(el, side.firstChild);
    }
    var step = Number(viewer.getAttribute("data-rendered-step"));
    var review = null;
    worst.forEach(function (r) { if (!review && (r.step === step || r.step + 1 === step)) review = r; });
    if (!review) { el.hidden = true; el.innerHTML = ""; el.removeAttribute("data-step"); return; }
    el.setAttribute("data-step", String(review.step));
    el.innerHTML = "";
    var title = document.createElement("h3");
    title.textContent = "Analysis of move " + (review.step + 1);
    var played = document.createElement("p");
    played.textContent = "Played by " + seatName(review.seat) + ": " + review.played_words + " (estimated " + signed(review.played_value) + ")";
    var best = document.createElement("p");
    best.className = "rv-better";
    best.textContent = better(review);
    var more = document.createElement("p");
    more.className = "muted small";
    more.textContent = "The best move found is estimated at " + signed(review.best_value) + ", among " + review.alternatives +
      " legal moves (the search's estimate of the seat's lead over its best rival).";
    el.appendChild(title);
    el.appendChild(played);
    el.appendChild(best);
    el.appendChild(more);
    el.hidden = false;
  }

  // Each seat's estimated lead at its decisions, held until its next one (before its first: its first).
  function leadSeries(players) {
    var last = [];
    reviews.forEach(function (r) { if (last[r.seat] === undefined) last[r.seat] = r.played_value; });
    for (var s = 0; s < players; s++) if (last[s] === undefined) last[s] = 0;
    return [{ step: 0, scores: last.slice() }].concat(reviews.map(function (r) {
      last[r.seat] = r.played_value;
      return { step: r.step, scores: last.slice() };
    }));
  }

  // The analysis' graph, drawn by the score graph's code (web/replay-moves.js) in its own panel after it.
  function graph() {
    var api = window.CaravanReplay;
    var viewer = document.getElementById("viewer");
    var side = viewer ? viewer.querySelector(".rv-side") : null;
    if (!reviews.length || !side || !api || !api.viewer || !api.viewer.helpers || !api.moves) return;
    var el = document.getElementById("rv-analysis-graph");
    if (!el) {
      el = document.createElement("div");
      el.id = "rv-analysis-graph";
      el.className = "rv-panel";
      var scores = document.getElementById("rv-graph");
      side.insertBefore(el, scores ? scores.nextSibling : null);
      el.addEventListener("click", function (e) {
        var svg = el.querySelector("svg");
        if (svg) api.viewer.show(api.moves.stepAt(svg, e.clientX, api.viewer.steps));
      });
    }
    var h = api.viewer.helpers();
    var step = Number(viewer.getAttribute("data-rendered-step")) || 0;
    el.innerHTML = api.moves.graph(leadSeries(h.players), api.viewer.steps, "The analysis' estimated lead over the best rival", step, h);
  }

  if (button) {
    button.addEventListener("click", function () {
      button.disabled = true;
      stateLine.textContent = "Asking for the analysis…";
      fetch(url, {
        method: "POST",
        credentials: "same-origin",
        headers: { Accept: "application/json", "X-CSRFToken": tokenInput ? tokenInput.value : "" }
      }).then(function (r) {
        return r.json().then(function (body) {
          if (r.ok) { render(body); return; }
          button.disabled = false;
          stateLine.textContent = "The analysis was refused: " + (body.detail || "HTTP " + r.status);
        });
      }).catch(function (err) {
        button.disabled = false;
        stateLine.textContent = "Could not ask for the analysis: " + err.message;
      });
    });
  }

  worstList.addEventListener("click", function (e) {
    var link = e.target.closest ? e.target.closest("a[data-step]") : null;
    var api = window.CaravanReplay;
    if (!link || !api || !api.viewer || e.ctrlKey || e.metaKey || e.shiftKey) return;
    e.preventDefault();
    api.viewer.show(Number(link.getAttribute("data-step")));
    var replay = document.getElementById("replay");
    if (replay && replay.scrollIntoView) replay.scrollIntoView();
  });

  // The viewer builds its move list and draws steps by itself: follow what it shows.
  function watchViewer() {
    var viewer = document.getElementById("viewer");
    if (!viewer || !window.MutationObserver) return;
    new MutationObserver(function (changes) {
      changes.forEach(function (c) {
        if (c.attributeName === "data-moves") mark();
        if (c.attributeName === "data-rendered-step") { note(); graph(); }
      });
    }).observe(viewer, { attributes: true, attributeFilter: ["data-moves", "data-rendered-step"] });
  }

  watchViewer();
  var initial = panel.getAttribute("data-status");
  if (initial && initial !== "none") poll();
})();
