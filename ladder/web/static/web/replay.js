/* Replay viewer: fetches frames re-simulated by the server (/api/v1/matches/<id>/frames/) and draws them.
   Expedition frames are drawn on the track (SVG); other games show the frame as JSON. Vanilla JS, no build. */
(function () {
  "use strict";
  var root = document.getElementById("viewer");
  if (!root) return;
  var cfg = JSON.parse(root.getAttribute("data-config"));
  var CHUNK = 50;
  var SEAT_COLORS = ["#dc2626", "#2563eb", "#16a34a", "#ca8a04", "#7c3aed"];
  var el = function (id) { return document.getElementById(id); };
  var board = el("rv-board"), scrub = el("rv-scrub"), stepLabel = el("rv-step"), turnLabel = el("rv-turn");
  var seatPick = el("rv-seat"), playBtn = el("rv-play"), speed = el("rv-speed"), statusLine = el("rv-status");
  var state = { step: 0, seat: "", playing: false, timer: null, track: null, chunks: {}, pending: {} };

  function esc(text) {
    return String(text).replace(/[&<>"']/g, function (c) {
      return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c];
    });
  }
  function seatName(seat) {
    var s = cfg.seats[seat];
    return s ? s.name : "seat " + seat;
  }
  function chunkKey(seat, start) { return seat + "|" + start; }

  function fetchChunk(seat, start) {
    var key = chunkKey(seat, start);
    if (state.chunks[key]) return Promise.resolve(state.chunks[key]);
    if (state.pending[key]) return state.pending[key];
    var url = cfg.api + "matches/" + cfg.matchId + "/frames/?start=" + start + "&count=" + CHUNK + (seat === "" ? "" : "&seat=" + seat);
    state.pending[key] = fetch(url, { headers: { Accept: "application/json" } }).then(function (r) {
      return r.json().then(function (body) {
        delete state.pending[key];
        if (!r.ok) throw new Error(body.detail || ("HTTP " + r.status));
        state.chunks[key] = body;
        return body;
      });
    });
    return state.pending[key];
  }

  function frameAt(seat, step) {
    var start = Math.floor(step / CHUNK) * CHUNK;
    return fetchChunk(seat, start).then(function (chunk) {
      if (start + CHUNK <= cfg.steps) fetchChunk(seat, start + CHUNK).catch(function () {});  // prefetch
      return { frame: chunk.frames[step - start], revealed: chunk.revealed };
    });
  }

  function cardHtml(type) {
    var color = String(type).split("-")[0];
    return '<span class="gcard c-' + esc(color) + '">' + esc(type) + "</span>";
  }
  function hiddenCards(count) {
    var out = "";
    for (var i = 0; i < count; i++) out += '<span class="gcard hidden" title="hidden card">?</span>';
    return out;
  }

  // Track layout: a snake of 10 spaces per row.
  var COLS = 10, W = 76, H = 70, GAP = 8, PAD = 12;
  function spacePos(index) {
    var row = Math.floor(index / COLS), col = index % COLS;
    if (row % 2 === 1) col = COLS - 1 - col;
    return { x: PAD + col * (W + GAP), y: PAD + row * (H + GAP + 10) };
  }

  function drawTrack(view) {
    var spaces = state.track.spaces;
    var rows = Math.ceil(spaces.length / COLS);
    var width = PAD * 2 + COLS * W + (COLS - 1) * GAP, height = PAD * 2 + rows * H + (rows - 1) * (GAP + 10);
    var chests = view.board_chests || {};
    var parts = ['<svg viewBox="0 0 ' + width + " " + height + '" role="img" aria-label="Expedition track" id="rv-track">'];
    for (var i = 0; i + 1 < spaces.length; i++) {
      var a = spacePos(i), b = spacePos(i + 1);
      parts.push('<line x1="' + (a.x + W / 2) + '" y1="' + (a.y + H / 2) + '" x2="' + (b.x + W / 2) + '" y2="' + (b.y + H / 2) + '" stroke="#c9b38f" stroke-width="4"/>');
    }
    spaces.forEach(function (s) {
      var p = spacePos(s.index);
      var cls = "space" + (s.leg === 2 ? " leg2" : "") + (s.score > 0 ? " scoring" : "") + (s.name ? " city" : "");
      parts.push('<g class="space-g" data-space="' + s.index + '"><rect class="' + cls + '" x="' + p.x + '" y="' + p.y + '" width="' + W + '" height="' + H + '" rx="8"/>');
      parts.push('<text class="space-idx" x="' + (p.x + 5) + '" y="' + (p.y + 12) + '">' + s.index + "</text>");
      if (s.name) parts.push('<text class="space-name" x="' + (p.x + W / 2) + '" y="' + (p.y + 26) + '" text-anchor="middle">' + esc(s.name) + "</text>");
      if (s.requirement && s.requirement !== "START") {
        parts.push('<text class="space-req" x="' + (p.x + W / 2) + '" y="' + (p.y + (s.name ? 39 : 30)) + '" text-anchor="middle">' + esc(s.requirement) + "</text>");
      }
      if (s.score > 0) {
        parts.push('<circle cx="' + (p.x + W - 12) + '" cy="' + (p.y + 12) + '" r="9" fill="#9a3412"><title>scores ' + s.score + "</title></circle>");
        parts.push('<text class="score" x="' + (p.x + W - 12) + '" y="' + (p.y + 15.5) + '" text-anchor="middle">' + s.score + "</text>");
      }
      var chest = chests[String(s.index)];
      if (chest) {
        parts.push('<rect class="chest" x="' + (p.x + 5) + '" y="' + (p.y + H - 20) + '" width="16" height="13" rx="2"><title>chest: ' + chest + " gold</title></rect>");
        parts.push('<text class="space-idx" x="' + (p.x + 24) + '" y="' + (p.y + H - 9) + '">' + chest + "</text>");
      }
      parts.push("</g>");
    });
    var bySpace = {};
    (view.pieces || []).forEach(function (piece) { (bySpace[piece.space] = bySpace[piece.space] || []).push(piece); });
    Object.keys(bySpace).forEach(function (space) {
      var pieces = bySpace[space], p = spacePos(Number(space));
      pieces.forEach(function (piece, k) {
        var cx = p.x + W - 14 - (k % 4) * 15, cy = p.y + H - 13 - Math.floor(k / 4) * 15;
        var color = SEAT_COLORS[piece.seat % SEAT_COLORS.length];
        parts.push('<circle class="piece" data-seat="' + piece.seat + '" cx="' + cx + '" cy="' + cy + '" r="8" fill="' + color + '"><title>' + esc(seatName(piece.seat)) + " (piece " + piece.piece + ")</title></circle>");
        parts.push('<text class="piece-label" x="' + cx + '" y="' + (cy + 3) + '" text-anchor="middle">' + piece.seat + "</text>");
      });
    });
    parts.push("</svg>");
    return parts.join("");
  }

  function describeEvent(e) {
    var who = e.seat !== undefined ? seatName(e.seat) + " " : "";
    switch (e.event) {
      case "move": return who + "moved piece " + e.piece + " to " + e.to + " paying " + (e.paid || []).join(", ");
      case "ballast": return who + "used ballast to " + e.to;
      case "draw": return who + (e.source === "deck" ? "drew from the deck" : "took " + e.card);
      case "chest": return who + "opened a chest on " + e.space + " (+" + e.value + ")";
      case "pass": return who + "passed";
      case "stop": return who + "stopped";
      default:
        if (/_scoring$/.test(e.event)) {
          return e.event.replace("_", " ") + ": " + (e.paid || []).map(function (p) { return seatName(p.seat) + " +" + p.gold; }).join(", ");
        }
        return JSON.stringify(e);
    }
  }

  function drawExpedition(frame, revealed) {
    var view = frame.view;
    var html = [drawTrack(view), '<div class="board-panels"><div><div class="players">'];
    view.players.forEach(function (pl) {
      var color = SEAT_COLORS[pl.seat % SEAT_COLORS.length];
      var cards;
      if (view.hands) cards = view.hands[pl.seat].map(cardHtml).join("");
      else if (view.seat === pl.seat && view.hand) cards = view.hand.map(cardHtml).join("");
      else cards = pl.known_cards.map(cardHtml).join("") + hiddenCards(pl.hand_count - pl.known_cards.length);
      html.push('<div class="player' + (view.current_seat === pl.seat ? " to-move" : "") + '" style="border-left-color:' + color + '" data-seat="' + pl.seat + '">' +
        "<b>" + esc(seatName(pl.seat)) + "</b> · seat " + pl.seat + "<br>" + pl.gold + " gold · " + pl.hand_count + " cards" +
        '<div class="cardrow">' + cards + "</div></div>");
    });
    html.push("</div>");
    html.push('<p><b>Display</b> <span class="cardrow">' + view.display.map(cardHtml).join("") + "</span></p>");
    html.push('<p class="muted small">draw pile ' + view.draw_pile + " · discard " + view.discard.length + " · turn " + view.turn + "/" + view.turn_cap +
      " · phase " + esc(view.phase) + (view.end_reason ? " · ended: " + esc(view.end_reason) : "") +
      (view.seat === null ? (revealed ? " · all hands revealed (match over)" : " · hands hidden") : " · as " + esc(seatName(view.seat)) + " saw it") + "</p>");
    if (frame.next_action) html.push('<p class="next-action">Next: <b>' + esc(seatName(frame.next_action.seat)) + "</b> plays <code>" + esc(frame.next_action.action) + "</code></p>");
    else html.push('<p class="next-action"><b>Final position.</b></p>');
    html.push("</div><div><b>Log</b><ol class=\"events\" reversed>");
    (view.events || []).slice(-10).reverse().forEach(function (e) { html.push("<li>" + esc(describeEvent(e)) + "</li>"); });
    html.push("</ol></div></div>");
    board.innerHTML = html.join("");
    turnLabel.textContent = view.current_seat !== null ? "· to move: " + seatName(view.current_seat) : "· game over";
  }

  function drawGeneric(frame) {
    board.innerHTML = (frame.next_action ? '<p class="next-action">Next: <b>' + esc(seatName(frame.next_action.seat)) + "</b> plays <code>" + esc(frame.next_action.action) + "</code></p>" : "<p><b>Final position.</b></p>") +
      '<pre class="json-frame">' + esc(JSON.stringify(frame.view, null, 2)) + "</pre>";
    turnLabel.textContent = "";
  }

  function show(step) {
    step = Math.max(0, Math.min(cfg.steps, step));
    state.step = step;
    scrub.value = step;
    stepLabel.textContent = step;
    root.setAttribute("data-step", String(step));
    var seat = state.seat;
    return frameAt(seat, step).then(function (got) {
      if (state.step !== step || state.seat !== seat) return;
      if (cfg.hasBoard && state.track) drawExpedition(got.frame, got.revealed);
      else drawGeneric(got.frame);
      statusLine.textContent = "";
      root.setAttribute("data-rendered-step", String(step));
    }).catch(function (err) {
      statusLine.textContent = "Could not load step " + step + ": " + err.message;
    });
  }

  function stop() {
    state.playing = false;
    playBtn.textContent = "▶ Play";
    if (state.timer) clearTimeout(state.timer);
    state.timer = null;
  }
  function tick() {
    if (!state.playing) return;
    if (state.step >= cfg.steps) { stop(); return; }
    show(state.step + 1).then(function () { state.timer = setTimeout(tick, Number(speed.value)); });
  }
  playBtn.addEventListener("click", function () {
    if (state.playing) { stop(); return; }
    if (state.step >= cfg.steps) state.step = 0;
    state.playing = true;
    playBtn.textContent = "❚❚ Pause";
    tick();
  });
  el("rv-first").addEventListener("click", function () { stop(); show(0); });
  el("rv-prev").addEventListener("click", function () { stop(); show(state.step - 1); });
  el("rv-next").addEventListener("click", function () { stop(); show(state.step + 1); });
  el("rv-last").addEventListener("click", function () { stop(); show(cfg.steps); });
  scrub.addEventListener("input", function () { stop(); show(Number(scrub.value)); });
  seatPick.addEventListener("change", function () { state.seat = seatPick.value; show(state.step); });
  document.addEventListener("keydown", function (e) {
    if (e.target && /INPUT|SELECT|TEXTAREA/.test(e.target.tagName) && e.target !== scrub) return;
    if (e.key === "ArrowRight") { stop(); show(state.step + 1); e.preventDefault(); }
    if (e.key === "ArrowLeft") { stop(); show(state.step - 1); e.preventDefault(); }
  });

  var ready = cfg.hasBoard
    ? fetch(cfg.api + "games/" + encodeURIComponent(cfg.gameId) + "/board/").then(function (r) { return r.json(); }).then(function (t) { state.track = t; })
    : Promise.resolve();
  ready.then(function () { return show(0); }).catch(function (err) { statusLine.textContent = "Could not load the board: " + err.message; });
})();
