/* The match viewer's panels beside the board (replay.js draws them; this file only builds their HTML and
   SVG): the move list, the seats' clocks and the score graph.

   - `moves.list(body, h)`: the whole game as a list (GET /api/v1/matches/<id>/moves/), grouped by round and
     by turn, each turn block in its seat's colour, each move a link to the step after it (?step=N).
   - `moves.clocks(frame, h)`: each seat's last decision (seconds used, as charged) and its time bank left.
   - `moves.graph(series, steps, label, step, h)`: a polyline per seat of the running score over the game,
     a cursor at the step shown; `moves.stepAt(svg, clientX, steps)` is the step under a click.
   h = { seatName(i), seatColor(i), esc(text), withNames(text), players, href(step), live } from the viewer.
   It reads only what the server served: it never fetches. Vanilla JS, no build. */
(function () {
  "use strict";
  var W = 640, H = 170, PAD = { l: 40, r: 10, t: 12, b: 26 };

  function roundTitle(round) { return round === null || round === undefined ? "Before the first round" : "Round " + round; }

  // Moves grouped: [{round, turns: [{turn, seat, moves: [...]}, ...]}, ...].
  function grouped(moves) {
    var rounds = [], round = null, block = null;
    moves.forEach(function (m) {
      if (!round || round.round !== m.round) { round = { round: m.round, turns: [] }; rounds.push(round); block = null; }
      if (!block || block.turn !== m.turn || block.seat !== m.seat) { block = { turn: m.turn, seat: m.seat, moves: [] }; round.turns.push(block); }
      block.moves.push(m);
    });
    return rounds;
  }

  function moveItem(m, h) {
    var to = m.step + 1;
    var clock = m.clock ? ' <span class="rv-move-clock" title="time the bot used">' + seconds(m.clock.seconds) + "</span>" : "";
    var fault = m.fault ? ' <span class="tag tag-token-revoked" title="a fault: the referee played this for the seat">fault</span>' : "";
    return '<li><a class="rv-move" href="' + h.href(to) + '" data-step="' + to + '"><span class="rv-move-n">' + to + ".</span> " +
      h.esc(m.text) + "</a>" + clock + fault + "</li>";
  }

  function list(body, h) {
    return grouped(body.moves).map(function (round) {
      return '<li class="rv-round"><h4>' + roundTitle(round.round) + '</h4><ol class="rv-turns">' + round.turns.map(function (t) {
        var head = (t.turn !== null && t.turn !== undefined ? "turn " + t.turn + " · " : "") + h.withNames("seat " + t.seat);
        return '<li class="rv-turn" style="border-left-color:' + h.seatColor(t.seat) + '"><div class="rv-turn-head">' + head +
          '</div><ol class="rv-turn-moves">' + t.moves.map(function (m) { return moveItem(m, h); }).join("") + "</ol></li>";
      }).join("") + "</ol></li>";
    }).join("");
  }

  function seconds(value) {
    if (value === null || value === undefined) return "—";
    if (value < 0.001) return "<1 ms";
    if (value < 1) return Math.round(value * 1000) + " ms";
    return value < 10 ? value.toFixed(2) + " s" : value.toFixed(1) + " s";
  }

  function clocks(frame, h) {
    var rows = [];
    var next = frame.next_action;
    for (var s = 0; s < h.players; s++) {
      var c = frame.clocks ? frame.clocks[s] : null;
      var last = c ? "last decision " + seconds(c.seconds) + ' <span class="muted">(move ' + (c.step + 1) + ")</span>" : '<span class="muted">no decision yet</span>';
      var bank = c && c.bank === null ? '<span class="muted">unclocked (house bot)</span>' : c ? "bank left " + seconds(c.bank) : "";
      var now = next && next.seat === s && next.clock ? '<div class="rv-clock-now">this decision: ' + seconds(next.clock.seconds) + "</div>" : "";
      rows.push('<li class="rv-clock' + (next && next.seat === s ? " to-move" : "") + '" style="border-left-color:' + h.seatColor(s) + '">' +
        '<span class="seat-dot seat-' + s + '"></span><b>' + h.esc(h.seatName(s)) + "</b> (seat " + s + ')<div>' + last +
        (bank ? " · " + bank : "") + "</div>" + now + "</li>");
    }
    return '<ul class="rv-clocks">' + rows.join("") + "</ul>";
  }

  function scale(series, steps) {
    var lo = Infinity, hi = -Infinity;
    series.forEach(function (p) { (p.scores || []).forEach(function (v) { lo = Math.min(lo, v); hi = Math.max(hi, v); }); });
    if (!isFinite(lo)) { lo = 0; hi = 1; }
    if (hi === lo) hi = lo + 1;
    return {
      x: function (step) { return PAD.l + (W - PAD.l - PAD.r) * (steps ? step / steps : 0); },
      y: function (v) { return H - PAD.b - (H - PAD.t - PAD.b) * (v - lo) / (hi - lo); },
      lo: lo, hi: hi
    };
  }

  // series: [{step, scores: [per seat]}] in step order; drawn as steps (a score holds until it changes).
  function graph(series, steps, label, step, h) {
    var k = scale(series, steps);
    var lines = [];
    for (var s = 0; s < h.players; s++) {
      var pts = [], last = null;
      series.forEach(function (p) {
        if (!p.scores) return;
        var v = p.scores[s];
        if (last !== null && v !== last) pts.push(k.x(p.step).toFixed(1) + "," + k.y(last).toFixed(1));
        if (last === null || v !== last) pts.push(k.x(p.step).toFixed(1) + "," + k.y(v).toFixed(1));
        last = v;
      });
      if (last !== null) pts.push(k.x(series[series.length - 1].step).toFixed(1) + "," + k.y(last).toFixed(1));
      lines.push('<polyline class="rv-score-line" data-seat="' + s + '" points="' + pts.join(" ") + '" stroke="' + h.seatColor(s) + '"><title>' +
        h.esc(h.seatName(s)) + " (seat " + s + ")</title></polyline>");
    }
    var cx = k.x(step).toFixed(1);
    var legend = [];
    for (var i = 0; i < h.players; i++) legend.push('<span class="rv-legend-item"><span class="seat-dot seat-' + i + '"></span>' + h.esc(h.seatName(i)) + " (seat " + i + ")</span>");
    var hint = h.live ? "" : ' <span class="muted small">(click to go to a step)</span>';  // the live view has no steps to go to
    return '<figure class="rv-graph"><figcaption>' + h.esc(label) + " per seat over the game" + (h.live ? " so far" : "") + hint + "</figcaption>" +
      '<svg class="rv-graph-svg" viewBox="0 0 ' + W + " " + H + '" role="img" aria-label="' + h.esc(label) + ' per seat, step 0 to ' + steps + '">' +
      '<rect class="chart-bg" x="' + PAD.l + '" y="' + PAD.t + '" width="' + (W - PAD.l - PAD.r) + '" height="' + (H - PAD.t - PAD.b) + '"/>' +
      '<text class="chart-tick" x="' + (PAD.l - 4) + '" y="' + (k.y(k.hi) + 4) + '" text-anchor="end">' + tick(k.hi) + "</text>" +
      '<text class="chart-tick" x="' + (PAD.l - 4) + '" y="' + (k.y(k.lo) + 4) + '" text-anchor="end">' + tick(k.lo) + "</text>" +
      '<text class="chart-tick" x="' + PAD.l + '" y="' + (H - 8) + '">step 0</text>' +
      '<text class="chart-tick" x="' + (W - PAD.r) + '" y="' + (H - 8) + '" text-anchor="end">step ' + steps + "</text>" +
      lines.join("") + '<line class="rv-graph-cursor" x1="' + cx + '" x2="' + cx + '" y1="' + PAD.t + '" y2="' + (H - PAD.b) + '"/>' +
      "</svg><div class=\"rv-legend small\">" + legend.join("") + "</div></figure>";
  }

  function tick(v) { return Number.isInteger(v) ? String(v) : v.toFixed(1); }

  function stepAt(svg, clientX, steps) {
    var box = svg.getBoundingClientRect();
    var x = (clientX - box.left) / box.width * W;
    var t = (x - PAD.l) / (W - PAD.l - PAD.r);
    return Math.max(0, Math.min(steps, Math.round(t * steps)));
  }

  window.CaravanReplay = window.CaravanReplay || {};
  window.CaravanReplay.moves = { list: list, clocks: clocks, graph: graph, stepAt: stepAt, seconds: seconds };
})();
