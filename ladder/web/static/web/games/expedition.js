/* Marco Polo Expedition's drawing for the match viewer (replay.js): the 29-space track as a snake with
   requirements, chests, scoring spaces and pieces, a legend of the requirement codes, each player's gold
   and hand (a seat's own hand in its view; others' unknown cards as placeholders, until the game is over and
   every hand is shown), the display and piles. */
(function () {
  "use strict";
  var COLS = 10, W = 76, H = 70, GAP = 8, PAD = 12;

  function spacePos(index) {
    var row = Math.floor(index / COLS), col = index % COLS;
    if (row % 2 === 1) col = COLS - 1 - col;
    return { x: PAD + col * (W + GAP), y: PAD + row * (H + GAP + 10) };
  }

  function cardHtml(ctx, type, secret) {
    var color = String(type).split("-")[0];
    return '<span class="gcard c-' + ctx.esc(color) + '"' + (secret ? " data-secret" : "") + ' title="' + ctx.esc(String(type).replace("-", " ")) + '">' + ctx.esc(type) + "</span>";
  }
  function hiddenCards(count) {
    var out = "";
    for (var i = 0; i < count; i++) out += '<span class="gcard hidden-item" title="a card this view does not know">?</span>';
    return out;
  }

  function drawTrack(ctx) {
    var view = ctx.view, esc = ctx.esc, spaces = ctx.board.spaces, legend = ctx.board.legend || {};
    var rows = Math.ceil(spaces.length / COLS);
    var width = PAD * 2 + COLS * W + (COLS - 1) * GAP, height = PAD * 2 + rows * H + (rows - 1) * (GAP + 10);
    var chests = view.board_chests || {};
    var parts = ['<div class="board-scroll"><svg class="board-svg" viewBox="0 0 ' + width + " " + height + '" role="img" aria-label="Expedition track" id="rv-track">'];
    for (var i = 0; i + 1 < spaces.length; i++) {
      var a = spacePos(i), b = spacePos(i + 1);
      parts.push('<line x1="' + (a.x + W / 2) + '" y1="' + (a.y + H / 2) + '" x2="' + (b.x + W / 2) + '" y2="' + (b.y + H / 2) + '" stroke="#c9b38f" stroke-width="4"/>');
    }
    spaces.forEach(function (s) {
      var p = spacePos(s.index);
      var cls = "exp-space" + (s.leg === 2 ? " leg2" : "") + (s.score > 0 ? " scoring" : "") + (s.name ? " city" : "");
      var title = (s.name ? s.name + ": " : "space " + s.index + ": ") + (legend[s.requirement] || s.requirement) + (s.score ? "; scores " + s.score : "");
      parts.push('<g class="space-g" data-space="' + s.index + '"><title>' + esc(title) + '</title><rect class="' + cls + '" x="' + p.x + '" y="' + p.y + '" width="' + W + '" height="' + H + '" rx="8"/>');
      parts.push('<text class="exp-idx" x="' + (p.x + 5) + '" y="' + (p.y + 12) + '">' + s.index + "</text>");
      if (s.name) parts.push('<text class="exp-name" x="' + (p.x + W / 2) + '" y="' + (p.y + 26) + '" text-anchor="middle">' + esc(s.name) + "</text>");
      if (s.requirement && s.requirement !== "START") {
        parts.push('<text class="exp-req" x="' + (p.x + W / 2) + '" y="' + (p.y + (s.name ? 39 : 30)) + '" text-anchor="middle">' + esc(s.requirement) + "</text>");
      }
      if (s.score > 0) {
        parts.push('<circle cx="' + (p.x + W - 12) + '" cy="' + (p.y + 12) + '" r="9" fill="#9a3412"></circle>');
        parts.push('<text class="exp-score" x="' + (p.x + W - 12) + '" y="' + (p.y + 15.5) + '" text-anchor="middle">' + s.score + "</text>");
      }
      var chest = chests[String(s.index)];
      if (chest) {
        parts.push('<rect class="exp-chest" x="' + (p.x + 5) + '" y="' + (p.y + H - 20) + '" width="16" height="13" rx="2"></rect>');
        parts.push('<text class="exp-idx" x="' + (p.x + 24) + '" y="' + (p.y + H - 9) + '">' + chest + "</text>");
      }
      parts.push("</g>");
    });
    var bySpace = {};
    (view.pieces || []).forEach(function (piece) { (bySpace[piece.space] = bySpace[piece.space] || []).push(piece); });
    Object.keys(bySpace).forEach(function (space) {
      var p = spacePos(Number(space));
      bySpace[space].forEach(function (piece, k) {
        var cx = p.x + W - 14 - (k % 4) * 15, cy = p.y + H - 13 - Math.floor(k / 4) * 15;
        parts.push('<circle class="piece exp-piece" data-seat="' + piece.seat + '" cx="' + cx + '" cy="' + cy + '" r="8" fill="' + ctx.seatColor(piece.seat) + '"><title>' + esc(ctx.seatName(piece.seat)) + " (seat " + piece.seat + ", piece " + piece.piece + ")</title></circle>");
        parts.push('<text class="exp-piece-label" x="' + cx + '" y="' + (cy + 3) + '" text-anchor="middle">' + piece.seat + "</text>");
      });
    });
    parts.push("</svg></div>");
    return parts.join("");
  }

  function legendHtml(ctx) {
    var legend = ctx.board.legend || {};
    var used = {};
    ctx.board.spaces.forEach(function (s) { if (legend[s.requirement]) used[s.requirement] = true; });
    return '<details class="exp-legend"><summary>What the space codes mean</summary><dl>' + Object.keys(used).sort().map(function (code) {
      return "<dt>" + ctx.esc(code) + "</dt><dd>" + ctx.esc(legend[code]) + "</dd>";
    }).join("") + "<dt>●</dt><dd>a scoring space and its gold</dd><dt>▬</dt><dd>a chest: gold for the first piece to enter</dd></dl></details>";
  }

  function handHtml(ctx, pl) {
    var view = ctx.view;
    if (view.hands) return view.hands[pl.seat].map(function (c) { return cardHtml(ctx, c, true); }).join("");
    if (view.seat === pl.seat && view.hand) return view.hand.map(function (c) { return cardHtml(ctx, c, true); }).join("");
    var known = pl.known_cards || [];
    return known.map(function (c) { return cardHtml(ctx, c, false); }).join("") + hiddenCards(pl.hand_count - known.length);
  }

  function draw(ctx) {
    var view = ctx.view, esc = ctx.esc;
    var html = [drawTrack(ctx), legendHtml(ctx), '<div class="board-panels"><div class="players">'];
    view.players.forEach(function (pl) {
      html.push('<div class="player' + (view.current_seat === pl.seat ? " to-move" : "") + '" style="border-left-color:' + ctx.seatColor(pl.seat) + '" data-seat="' + pl.seat + '">' +
        "<b>" + esc(ctx.seatName(pl.seat)) + "</b> · seat " + pl.seat + "<br>" + pl.gold + " gold · " + pl.hand_count + (pl.hand_count === 1 ? " card" : " cards") +
        '<div class="cardrow" data-private-of="' + pl.seat + '">' + handHtml(ctx, pl) + "</div></div>");
    });
    html.push("</div>");
    html.push('<p><b>Display</b> <span class="cardrow">' + view.display.map(function (c) { return cardHtml(ctx, c, false); }).join("") + "</span></p>");
    html.push('<p class="muted small">draw pile ' + view.draw_pile + " · discard " + view.discard.length + " · turn " + view.turn + "/" + view.turn_cap +
      " · phase " + esc(view.phase) + (view.end_reason ? " · ended: " + esc(view.end_reason.replace(/_/g, " ")) : "") +
      (view.seat === null || view.seat === undefined ? (ctx.revealed ? " · all hands shown (the match is over)" : " · hands hidden") : " · as " + esc(ctx.seatName(view.seat)) + " saw it" + (view.hands ? ", every hand shown (the game is over)" : "")) + "</p>");
    html.push("</div>");
    return html.join("");
  }

  window.CaravanReplay.register("expedition", { draw: draw });
})();
