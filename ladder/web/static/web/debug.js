/* The debug panel of the match page (_debug_panel.html): the owner's bots' debug texts, step by step.

   It fetches GET /api/v1/matches/<id>/debug/ (the panel's data-debug-url) with the visitor's session; the
   server answers a seat's texts to its bot's owner and staff only, 403 to anyone else, and then the panel
   stays hidden. Each step is a link to the replay at that step in that seat's view (?step=N&seat=S#replay),
   and the step the page was opened at is marked (and scrolled to) in the list;
   "More steps" asks for the next page (next_start). Texts are set as text (never as HTML): a bot's text can
   hold anything. Vanilla JS, no build. */
(function () {
  "use strict";
  var panel = document.getElementById("debug");
  if (!panel) return;
  var url = panel.getAttribute("data-debug-url");
  var seatsBox = document.getElementById("debug-seats");
  var more = document.getElementById("debug-more");
  var status = document.getElementById("debug-status");
  var lists = {};  // seat index -> its <ol>
  var shownStep = new URLSearchParams(window.location.search).get("step");  // the replay's step: marked

  function seatList(seat) {
    if (lists[seat.seat]) return lists[seat.seat];
    var block = document.createElement("div");
    block.className = "debug-seat";
    var title = document.createElement("h3");
    title.textContent = "Seat " + seat.seat + " — " + seat.bot.name;
    var list = document.createElement("ol");
    list.className = "debug-entries";
    block.appendChild(title);
    block.appendChild(list);
    seatsBox.appendChild(block);
    lists[seat.seat] = list;
    return list;
  }

  function entryItem(entry) {
    var item = document.createElement("li");
    item.setAttribute("data-step", String(entry.step));
    var link = document.createElement("a");
    link.href = entry.replay;
    link.textContent = "step " + entry.step;
    var text = document.createElement("pre");
    text.className = "debug-text";
    text.textContent = entry.text;
    item.appendChild(link);
    item.appendChild(text);
    if (String(entry.step) === shownStep) item.className = "debug-current";
    return item;
  }

  function show(body) {
    var count = 0;
    body.seats.forEach(function (seat) {
      var list = seatList(seat);
      seat.entries.forEach(function (entry) { list.appendChild(entryItem(entry)); count += 1; });
    });
    var total = seatsBox.querySelectorAll("li").length;
    status.textContent = total ? total + " step(s) with a text" : "Your bot wrote no debug text in this match.";
    more.hidden = body.next_start === null;
    more.setAttribute("data-start", body.next_start === null ? "" : String(body.next_start));
    panel.hidden = false;
    var current = seatsBox.querySelector(".debug-current");
    if (current && current.parentNode.scrollTo) current.parentNode.scrollTo(0, current.offsetTop - current.parentNode.offsetTop);
    return count;
  }

  function load(start) {
    var sep = url.indexOf("?") < 0 ? "?" : "&";
    return fetch(url + sep + "start=" + start, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (response) {
        if (!response.ok) return null;  // not the owner (403), or no such match: nothing to show
        return response.json().then(show);
      })
      .catch(function () { /* the panel stays hidden */ });
  }

  more.addEventListener("click", function () {
    more.hidden = true;
    load(Number(more.getAttribute("data-start") || 0));
  });
  load(0);
})();
