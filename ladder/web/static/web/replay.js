/* The match viewer's core: replays of finished matches and the live view of running ones.

   It fetches frames re-simulated by the server (/api/v1/matches/<id>/frames/, /index/, /live/) and the
   game's static board (/api/v1/games/<id>/board/), and draws around the game's own renderer: the step
   controls, jumps by turn and by round, the address (?step=N&seat=S), the next action and the log in words,
   the final screen, and beside the board (web/replay-moves.js) the move list (/moves/), each seat's clock
   and the score graph, and what the last action changed (web/replay-diff.js: the numbers by seat, and the
   changed elements of the board marked `rv-changed`, from the frame before, drawn off-screen); the live
   view draws the clocks and the graph the same way, from its frame's `clocks` and `score_series`. A sticky
   bar keeps the current move and the step buttons in view under the board. Each game's file
   (web/games/<family>.js) registers its renderer:

     CaravanReplay.register("<family>", { draw: function (ctx) { return "<html>"; } });

   ctx = { frame, view, board, seat, revealed, players, seatName(i), seatColor(i), seatTextColor(i), esc(text),
   live }: seatColor fills and borders, seatTextColor writes text in a seat's hue on a light panel.
   A renderer draws the board and the players' panels only, from the frame it is given; it must not fetch.
   Hidden information is the server's business: a seat's frames hold that seat's observation only until
   the game is over (the final one every seat's hidden items too), and the spectator's hold every hand
   hidden until the match is over. Vanilla JS, no build. */
(function () {
  "use strict";
  var SEAT_COLORS = ["#dc2626", "#2563eb", "#16a34a", "#ca8a04", "#7c3aed"];
  // The same hues, dark enough for a seat's name written in them on a light panel (4.5:1 or more)
  var SEAT_TEXT_COLORS = ["#b91c1c", "#1d4ed8", "#15803d", "#a16207", "#6d28d9"];
  var renderers = {};
  var api = { register: function (family, renderer) { renderers[family] = renderer; }, viewer: null };
  window.CaravanReplay = api;

  function esc(text) {
    return String(text).replace(/[&<>"']/g, function (c) {
      return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c];
    });
  }
  function seatColor(seat) { return SEAT_COLORS[Number(seat) % SEAT_COLORS.length]; }
  function seatTextColor(seat) { return SEAT_TEXT_COLORS[Number(seat) % SEAT_TEXT_COLORS.length]; }

  function Viewer(root) {
    var cfg = JSON.parse(root.getAttribute("data-config"));
    var self = this;
    var el = function (id) { return document.getElementById(id); };
    var CHUNK = 100;
    var board = el("rv-board"), statusLine = el("rv-status"), words = el("rv-words");
    var state = {
      step: 0, seat: "", playing: false, timer: null, chunks: {}, pending: {}, index: null, table: null,
      moves: null, series: [], drawn: null, live: null
    };
    var panels = buildPanels();

    // The side column (clocks, words, graph, moves) beside the board, the changes under it, the sticky bar.
    function buildPanels() {
      var body = board.parentNode;
      var side = document.createElement("aside");
      side.className = "rv-side";
      side.setAttribute("aria-label", "the match beside the board");
      side.innerHTML = '<div id="rv-clocks" class="rv-panel" hidden></div>';
      side.appendChild(words);
      side.insertAdjacentHTML("beforeend", '<section id="rv-moves" class="rv-panel rv-moves" hidden aria-label="moves"><h3>Moves</h3>' +
        '<div class="rv-moves-scroll" tabindex="0" role="region" aria-label="the move list"><ol class="rv-rounds"></ol></div></section>');
      var main = document.createElement("div");
      main.className = "rv-main";
      body.insertBefore(main, board);
      main.insertAdjacentHTML("beforeend", '<div id="rv-final"></div>');
      main.appendChild(board);
      main.insertAdjacentHTML("beforeend", '<div id="rv-changes" class="rv-changes small" aria-live="polite"></div>' +
        '<div id="rv-graph" class="rv-panel" hidden></div>');
      body.appendChild(side);
      var bar = document.createElement("div");
      bar.className = "rv-bar";
      bar.id = "rv-bar";
      bar.innerHTML = (cfg.mode === "live" ? "" : '<button type="button" data-go="-1" aria-label="previous step">◀</button>') +
        '<span id="rv-now" class="rv-now"></span>' + (cfg.mode === "live" ? "" : '<button type="button" data-go="1" aria-label="next step">▶</button>');
      body.parentNode.insertBefore(bar, body.nextSibling);
      return { side: side, final: el("rv-final"), clocks: el("rv-clocks"), graph: el("rv-graph"), moves: el("rv-moves"), changes: el("rv-changes"), bar: bar, now: el("rv-now") };
    }
    function helpers() {
      return { seatName: seatName, seatColor: seatColor, esc: esc, withNames: withNames, players: cfg.seats.length, href: href, live: cfg.mode === "live" };
    }
    function href(step) {
      return "?step=" + step + (state.seat === "" ? "" : "&seat=" + state.seat) + "#replay";
    }

    function seatName(seat) {
      var s = cfg.seats[seat];
      return s ? s.name : "seat " + seat;
    }
    // "seat 2 sold ..." in the game's words becomes "<b>Name (seat 2)</b> sold ...", in the seat's colour.
    function withNames(text) {
      return esc(text).replace(/\bseats? (\d+)\b/g, function (all, seat) {
        if (!cfg.seats[Number(seat)] || /^seats/.test(all)) return all;
        return '<b class="who" style="color:' + seatTextColor(seat) + '">' + esc(seatName(Number(seat))) + " (seat " + seat + ")</b>";
      });
    }
    function getJson(url) {
      return fetch(url, { headers: { Accept: "application/json" } }).then(function (r) {
        return r.json().then(function (body) {
          if (!r.ok) { var err = new Error(body.detail || ("HTTP " + r.status)); err.status = r.status; throw err; }
          return body;
        });
      });
    }
    function fetchChunk(seat, start) {
      var key = seat + "|" + start;
      if (state.chunks[key]) return Promise.resolve(state.chunks[key]);
      if (state.pending[key]) return state.pending[key];
      var url = cfg.api + "matches/" + cfg.matchId + "/frames/?start=" + start + "&count=" + CHUNK + (seat === "" ? "" : "&seat=" + seat);
      state.pending[key] = getJson(url).then(function (body) {
        delete state.pending[key];
        state.chunks[key] = body;
        return body;
      }, function (err) { delete state.pending[key]; throw err; });
      return state.pending[key];
    }
    function frameAt(seat, step) {
      var start = Math.floor(step / CHUNK) * CHUNK;
      return fetchChunk(seat, start).then(function (chunk) {
        if (start + CHUNK <= cfg.steps) fetchChunk(seat, start + CHUNK).catch(function () {});  // prefetch
        return { frame: chunk.frames[step - start], revealed: chunk.revealed };
      });
    }

    function logHtmlFirst(frame) {
      var lines = frame.log || [];
      return lines.length ? "<b>" + frame.step + ".</b> " + withNames(lines[lines.length - 1].text) : "The start of the game";
    }
    function logHtml(frame) {
      var lines = (frame.log || []).slice().reverse();
      if (!lines.length) return '<p class="muted small">Nothing has happened yet.</p>';
      return '<ul class="events" tabindex="0" aria-label="what happened, newest first">' + lines.map(function (line) {
        var dot = line.seat !== null && line.seat !== undefined ? '<span class="seat-dot seat-' + Number(line.seat) + '"></span>' : '<span class="seat-dot game"></span>';
        return "<li>" + dot + withNames(line.text) + "</li>";
      }).join("") + "</ul>";
    }
    function resultHtml(result) {
      var rows = cfg.seats.map(function (s) { return s.seat; }).sort(function (a, b) { return result.ranks[a] - result.ranks[b] || a - b; });
      var table = '<table class="table result-table"><thead><tr><th class="num">Rank</th><th>Seat</th><th class="num">Score</th></tr></thead><tbody>' +
        rows.map(function (seat) {
          var forfeited = (result.forfeits || []).indexOf(seat) >= 0;
          return '<tr><td class="num strong">' + result.ranks[seat] + '</td><td><span class="seat-dot seat-' + seat + '"></span> ' +
            esc(seatName(seat)) + " (seat " + seat + ")" + (forfeited ? ' <span class="tag tag-token-revoked">forfeited</span>' : "") +
            '</td><td class="num">' + result.scores[seat] + "</td></tr>";
        }).join("") + "</tbody></table>";
      return '<section class="final-screen" id="rv-result"><h3>Final result' + (result.reason && result.reason !== "completed" ? " (" + esc(result.reason.replace(/_/g, " ")) + ")" : "") + "</h3>" +
        table + '<ul class="result-lines">' + (result.lines || []).map(function (l) { return "<li>" + withNames(l) + "</li>"; }).join("") + "</ul></section>";
    }
    function wordsHtml(frame) {
      var parts = [];
      if (frame.next_action) {
        // As a seat saw it, another seat's action id is not shown (it may name a hidden choice).
        var ownView = state.seat === "" || Number(state.seat) === frame.next_action.seat;
        parts.push('<p class="next-action">Next: ' + withNames("seat " + frame.next_action.seat) + " " + esc(frame.next_action.text) +
          (ownView ? ' <code class="muted small" title="the action id the bot sent">' + esc(frame.next_action.action) + "</code>" : "") + "</p>");
      } else if (!frame.result && cfg.mode === "live") {
        parts.push('<p class="next-action muted">Waiting for the next decision…</p>');
      }
      parts.push('<div class="log"><h3>What happened</h3>' + logHtml(frame) + "</div>");
      return parts.join("");
    }
    function where(frame) {
      var bits = [];
      if (frame.round !== null && frame.round !== undefined) bits.push("round " + frame.round);
      if (frame.turn !== null && frame.turn !== undefined) bits.push("turn " + frame.turn);
      var mover = frame.next_action ? frame.next_action.seat : frame.view && frame.view.current_seat;
      if (frame.result) bits.push("game over");
      else if (mover !== null && mover !== undefined) bits.push("to move: " + seatName(mover));
      return bits.join(" · ");
    }

    function boardHtml(frame, revealed, quiet) {
      var renderer = renderers[cfg.family];
      var ctx = {
        frame: frame, view: frame.view, board: state.table, seat: state.seat === "" ? null : Number(state.seat),
        revealed: !!revealed, players: cfg.seats.length, seatName: seatName, seatColor: seatColor,
        seatTextColor: seatTextColor, esc: esc,
        live: cfg.mode === "live"
      };
      try {
        return renderer ? renderer.draw(ctx) : '<pre class="json-frame">' + esc(JSON.stringify(frame.view, null, 2)) + "</pre>";
      } catch (err) {
        if (!quiet) root.setAttribute("data-render-errors", (root.getAttribute("data-render-errors") || "") + "step " + frame.step + ": " + err.message + "\n");
        return '<p class="error-box">This frame could not be drawn (' + esc(err.message) + ").</p>";
      }
    }

    // Draws `frame`; `before` (the frame of the step before, same view) if known, to show what changed.
    function draw(frame, revealed, before) {
      var html = boardHtml(frame, revealed, false);
      var old = before && api.diff ? drawnBefore(before, revealed) : null;
      board.innerHTML = html;
      state.drawn = { key: state.seat + "|" + frame.step, sigs: api.diff ? api.diff.signatures(board) : null };
      board.querySelectorAll(".board-scroll").forEach(function (box) {
        if (!box.hasAttribute("tabindex")) {
          box.setAttribute("tabindex", "0");
          box.setAttribute("role", "region");
          box.setAttribute("aria-label", "the board (scrolls sideways)");
        }
      });
      words.innerHTML = wordsHtml(frame);
      panels.final.innerHTML = frame.result ? resultHtml(frame.result) : "";  // the final screen has the width
      el("rv-turn").textContent = where(frame);
      showChanges(frame, before, old);
      showClocks(frame);
      showGraph(frame);
    }
    // The signatures of the board before: the last one drawn if it was that step, else drawn off-screen.
    function drawnBefore(before, revealed) {
      if (state.drawn && state.drawn.sigs && state.drawn.key === state.seat + "|" + before.step) return state.drawn.sigs;
      var holder = document.createElement("div");
      holder.innerHTML = boardHtml(before, revealed, true);
      return api.diff.signatures(holder);
    }
    function showChanges(frame, before, old) {
      var diff = api.diff;
      if (!before || !diff) { panels.changes.innerHTML = ""; root.setAttribute("data-changed", "0"); return; }
      var marked = diff.mark(old, state.drawn.sigs);
      var deltas = diff.deltas(before.view, frame.view, cfg.seats.length);
      root.setAttribute("data-changed", String(marked));
      root.setAttribute("data-deltas", String(deltas.length));
      var bySeat = {};
      deltas.forEach(function (d) {
        var who = d.seat === null ? "table" : d.seat;
        (bySeat[who] = bySeat[who] || []).push(esc(d.label) + " " + (d.delta > 0 ? "+" : "−") + Math.abs(d.delta));
      });
      var since = frame.step - before.step > 1 ? " (since step " + before.step + ")" : "";
      var rows = Object.keys(bySeat).map(function (who) {
        var name = who === "table" ? "the table" : withNames("seat " + who);
        return "<li>" + (who === "table" ? '<span class="seat-dot game"></span>' : '<span class="seat-dot seat-' + who + '"></span>') + name + ": " + bySeat[who].join(", ") + "</li>";
      });
      panels.changes.innerHTML = rows.length ? '<h3 class="rv-changes-h">Changed by the last move' + since + '</h3><ul class="rv-changes-list">' + rows.join("") + "</ul>" : "";
    }
    function showClocks(frame) {
      var timed = frame.clocks && frame.clocks.some(function (c) { return c; });
      panels.clocks.hidden = !timed && !(frame.next_action && frame.next_action.clock);
      if (!panels.clocks.hidden) panels.clocks.innerHTML = "<h3>Clocks</h3>" + api.moves.clocks(frame, helpers());
    }
    function showGraph(frame) {
      var label = state.moves ? state.moves.score_label : cfg.scoreLabel;
      if (!label || !state.series.length || !api.moves) { panels.graph.hidden = true; return; }
      var steps = cfg.mode === "live" ? Math.max(1, state.series[state.series.length - 1].step) : cfg.steps;
      panels.graph.hidden = false;
      panels.graph.innerHTML = api.moves.graph(state.series, steps, label, frame.step, helpers());
      panels.graph.setAttribute("data-steps", String(steps));
    }
    function showCurrentMove(step) {
      var moves = panels.moves;
      var old = moves.querySelector("a.rv-move.current");
      if (old) { old.classList.remove("current"); old.removeAttribute("aria-current"); }
      var move = state.moves && step > 0 ? state.moves.moves[step - 1] : null;
      panels.now.innerHTML = move ? "<b>" + step + ".</b> " + withNames("seat " + move.seat) + " " + esc(move.text) : step === 0 ? "The start of the game" : "";
      var link = moves.querySelector('a.rv-move[data-step="' + step + '"]');
      if (!link) return;
      link.classList.add("current");
      link.setAttribute("aria-current", "step");
      var box = moves.querySelector(".rv-moves-scroll");
      var r = link.getBoundingClientRect(), b = box.getBoundingClientRect();
      if (r.top < b.top || r.bottom > b.bottom) box.scrollTop += (r.top - b.top) - box.clientHeight / 2;
    }

    function writeAddress() {
      var params = new URLSearchParams(window.location.search);
      params.set("step", String(state.step));
      if (state.seat === "") params.delete("seat"); else params.set("seat", state.seat);
      window.history.replaceState(null, "", window.location.pathname + "?" + params.toString() + "#replay");
    }

    function show(step) {
      step = Math.max(0, Math.min(cfg.steps, Math.round(step)));
      state.step = step;
      el("rv-scrub").value = step;
      el("rv-step").textContent = step;
      root.setAttribute("data-step", String(step));
      var seat = state.seat;
      var before = step > 0 ? frameAt(seat, step - 1).then(function (got) { return got.frame; }, function () { return null; }) : Promise.resolve(null);
      return Promise.all([frameAt(seat, step), before]).then(function (both) {
        var got = both[0];
        if (state.step !== step || state.seat !== seat) return;
        draw(got.frame, got.revealed, both[1]);
        showCurrentMove(step);
        statusLine.textContent = "";
        writeAddress();
        root.setAttribute("data-rendered-step", String(step));
      }).catch(function (err) {
        statusLine.textContent = "Could not load step " + step + ": " + err.message;
      });
    }
    self.show = show;
    self.helpers = helpers;  // for the analysis' graph (web/replay-analysis.js), drawn as the score graph is
    self.steps = cfg.steps;

    // Jumps: the first step of the next or previous turn / round after the current step.
    function jump(kind, direction) {
      if (!state.index) return;
      var starts = kind === "round" ? state.index.rounds.map(function (r) { return r.step; }) : state.index.turns;
      var target = direction > 0 ? cfg.steps : 0;
      for (var i = 0; i < starts.length; i++) {
        var s = direction > 0 ? starts[i] : starts[starts.length - 1 - i];
        if ((direction > 0 && s > state.step) || (direction < 0 && s < state.step)) { target = s; break; }
      }
      stopPlaying();
      show(target);
    }

    function stopPlaying() {
      state.playing = false;
      el("rv-play").textContent = "▶ Play";
      if (state.timer) clearTimeout(state.timer);
      state.timer = null;
    }
    function delay() {
      var value = el("rv-speed").value;
      if (value.charAt(0) === "g") return Math.max(8, Number(value.slice(1)) * 1000 / Math.max(1, cfg.steps));
      return Number(value);
    }
    function tick() {
      if (!state.playing) return;
      if (state.step >= cfg.steps) { stopPlaying(); return; }
      var started = Date.now();
      show(state.step + 1).then(function () {
        state.timer = setTimeout(tick, Math.max(0, delay() - (Date.now() - started)));
      });
    }

    function bindReplayControls() {
      el("rv-play").addEventListener("click", function () {
        if (state.playing) { stopPlaying(); return; }
        if (state.step >= cfg.steps) state.step = 0;
        state.playing = true;
        el("rv-play").textContent = "❚❚ Pause";
        tick();
      });
      var buttons = {
        "rv-first": function () { stopPlaying(); show(0); },
        "rv-prev": function () { stopPlaying(); show(state.step - 1); },
        "rv-next": function () { stopPlaying(); show(state.step + 1); },
        "rv-last": function () { stopPlaying(); show(cfg.steps); },
        "rv-prev-turn": function () { jump("turn", -1); },
        "rv-next-turn": function () { jump("turn", 1); },
        "rv-prev-round": function () { jump("round", -1); },
        "rv-next-round": function () { jump("round", 1); }
      };
      Object.keys(buttons).forEach(function (id) { el(id).addEventListener("click", buttons[id]); });
      el("rv-scrub").addEventListener("input", function () { stopPlaying(); show(Number(el("rv-scrub").value)); });
      document.addEventListener("keydown", function (e) {
        if (e.target && /INPUT|SELECT|TEXTAREA/.test(e.target.tagName) && e.target !== el("rv-scrub")) return;
        var step = { ArrowRight: 1, ArrowLeft: -1 }[e.key];
        if (step && e.shiftKey) { jump("turn", step); e.preventDefault(); }
        else if (step) { stopPlaying(); show(state.step + step); e.preventDefault(); }
        else if (e.key === "PageDown") { jump("round", 1); e.preventDefault(); }
        else if (e.key === "PageUp") { jump("round", -1); e.preventDefault(); }
        else if (e.key === "Home") { stopPlaying(); show(0); e.preventDefault(); }
        else if (e.key === "End") { stopPlaying(); show(cfg.steps); e.preventDefault(); }
      });
    }

    function loadMoves() {
      var all = [];
      function page(start) {
        return getJson(cfg.api + "matches/" + cfg.matchId + "/moves/?start=" + start).then(function (body) {
          all = all.concat(body.moves);
          if (body.moves.length && all.length < body.steps) return page(all.length);
          body.moves = all;
          return body;
        });
      }
      return page(0).then(function (body) {
        state.moves = body;
        state.series = body.scores.map(function (scores, i) { return { step: i, scores: scores }; });
        panels.moves.querySelector(".rv-rounds").innerHTML = api.moves.list(body, helpers());
        panels.moves.hidden = false;
        root.setAttribute("data-moves", "ready");
        showCurrentMove(state.step);
        if (state.drawn) showGraph({ step: state.step });
      }).catch(function (err) { statusLine.textContent = "The move list is unavailable: " + err.message; });
    }
    function bindPanels() {
      panels.moves.addEventListener("click", function (e) {
        var link = e.target.closest ? e.target.closest("a.rv-move") : null;
        if (!link || e.ctrlKey || e.metaKey || e.shiftKey) return;
        e.preventDefault();
        stopPlaying();
        show(Number(link.getAttribute("data-step")));
      });
      panels.graph.addEventListener("click", function (e) {
        var svg = panels.graph.querySelector("svg");
        if (!svg) return;
        stopPlaying();
        show(api.moves.stepAt(svg, e.clientX, cfg.steps));
      });
      panels.bar.addEventListener("click", function (e) {
        var go = e.target.closest ? e.target.closest("[data-go]") : null;
        if (!go) return;
        stopPlaying();
        show(state.step + Number(go.getAttribute("data-go")));
      });
    }

    function startReplay() {
      bindReplayControls();
      bindPanels();
      var params = new URLSearchParams(window.location.search);
      var seat = params.get("seat");
      if (seat !== null && cfg.seats[Number(seat)]) { state.seat = String(Number(seat)); el("rv-seat").value = state.seat; }
      el("rv-seat").addEventListener("change", function () {
        state.seat = el("rv-seat").value;
        panels.moves.querySelectorAll("a.rv-move").forEach(function (a) { a.setAttribute("href", href(Number(a.getAttribute("data-step")))); });
        show(state.step);
      });
      loadMoves();
      var step = Number(params.get("step") || 0);
      getJson(cfg.api + "matches/" + cfg.matchId + "/index/").then(function (index) {
        state.index = index;
        root.setAttribute("data-index", "ready");
      }).catch(function (err) { statusLine.textContent = "Jumps by turn and round are unavailable: " + err.message; });
      return show(isFinite(step) ? step : 0);
    }

    // Live: poll the latest public frame; once the match is over, load its replay.
    function startLive() {
      var live = el("rv-live");
      function poll() {
        getJson(cfg.api + "matches/" + cfg.matchId + "/live/").then(function (body) {
          if (body.status !== "RUNNING") {
            live.textContent = body.status === "DONE" ? "The match is over: loading its replay…" : "The match is " + body.status.toLowerCase() + ".";
            if (body.status === "DONE") window.location.reload();
            return;
          }
          if (body.frame) {
            var before = state.live && state.live.step < body.frame.step ? state.live : null;
            state.series = body.frame.score_series || [];  // the whole game so far, as the replay's graph
            cfg.scoreLabel = body.frame.score_label;
            if (!state.live || state.live.step !== body.frame.step) draw(body.frame, false, before);
            state.live = body.frame;
            panels.now.innerHTML = logHtmlFirst(body.frame);
            root.setAttribute("data-rendered-step", String(body.step));
            el("rv-step").textContent = body.step;
          }
          live.textContent = "Live · " + body.steps + " steps played" + (body.delay ? ", shown " + body.delay + " steps behind" : "") + " · only public information until the match is over";
          setTimeout(poll, 2000);
        }).catch(function (err) {
          live.textContent = "The live view is unavailable: " + err.message;
          if (err.status !== 404) setTimeout(poll, 5000);
        });
      }
      poll();
    }

    var ready = cfg.hasBoard
      ? getJson(cfg.api + "games/" + encodeURIComponent(cfg.gameId) + "/board/").then(function (t) { state.table = t; })
      : Promise.resolve();
    ready.then(function () {
      if (cfg.mode === "live") startLive(); else startReplay();
    }).catch(function (err) { statusLine.textContent = "Could not load the board: " + err.message; });
  }

  document.addEventListener("DOMContentLoaded", function () {
    var root = document.getElementById("viewer");
    if (root) api.viewer = new Viewer(root);
  });
})();
