/* kdtourney play page: the position from the server (GET /state, held until it changes), your
   moves to it (POST /move), drawn by board.js. #play carries data-phase (starting, yours, theirs,
   over, done, closed) and data-version (the state shown). */
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("play-data").textContent);
  var board = window.kdBoard(data);
  var $ = function (id) { return document.getElementById(id); };
  var root = $("play"), status = $("pl-status"), errorText = $("pl-error");
  var state = null, pick = null, stopped = false;

  function post(path, body) {
    errorText.textContent = "";
    return fetch(path, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body || {}) })
      .then(function (r) { return r.json().then(function (answer) { if (!r.ok) { errorText.textContent = answer.error; } }); })
      .catch(function (e) { errorText.textContent = "kdtourney did not answer: " + e; });
  }
  function move(m) { post("/move", { move: m, version: state.version }); }

  function phase() {
    if (!state || state.phase === "starting") { return "starting"; }
    if (state.phase === "done") { return "done"; }
    if (state.phase === "over") { return "over"; }
    return state.ask ? "yours" : "theirs";
  }
  function ordinal(n) { return n + (n === 1 ? "st" : n === 2 ? "nd" : n === 3 ? "rd" : "th"); }
  function who(seat) { return seat === state.human ? "you" : state.seats[seat]; }
  /* who won a game and by how much, then every final score: "You won by 7 points: you 31 (1st), ..." */
  function outcome(r) {
    var first = [], best = -Infinity, other = -Infinity;
    r.ranks.forEach(function (rank, i) { if (rank === 1) { first.push(i); best = r.scores[i]; } });
    r.scores.forEach(function (score, i) { if (first.indexOf(i) < 0) { other = Math.max(other, score); } });
    var won = first.length > 1 ? "A tie between " + first.map(who).join(" and ") + " (tiebreaks did not part them)"
      : (first[0] === state.human ? "You won" : who(first[0]) + " won") +
        (other > -Infinity ? " by " + (best - other) + " point" + (best - other === 1 ? "" : "s") : "");
    return "Game " + r.game + " is over. " + won + ". Final scores: " + state.seats.map(function (s, i) {
      return who(i) + " " + r.scores[i] + " (" + ordinal(r.ranks[i]) + ")";
    }).join(", ") + "." + (r.faults.length ? " Faults: " + r.faults.join("; ") : "");
  }

  /* the frame's squares no domino can reach: the kingdom would outgrow size x size (shaded) */
  function beyond(squares, size, origin, view) {
    var r0 = Infinity, r1 = -Infinity, c0 = Infinity, c1 = -Infinity, out = [];
    squares.forEach(function (q) {
      r0 = Math.min(r0, q[0]); r1 = Math.max(r1, q[0]); c0 = Math.min(c0, q[1]); c1 = Math.max(c1, q[1]);
    });
    for (var r = origin[0]; r < origin[0] + view; r++) {
      for (var c = origin[1]; c < origin[1] + view; c++) {
        if (Math.max(r1, r) - Math.min(r0, r) >= size || Math.max(c1, c) - Math.min(c0, c) >= size) {
          out.push({ r: r, c: c, cls: "beyond" });
        }
      }
    }
    return out;
  }

  function draw() {
    var p = phase(), ask = state.ask, size = state.size, view = 2 * size - 1, origin = [1 - size, 1 - size];
    root.setAttribute("data-phase", p);
    root.setAttribute("data-version", String(state.version));
    if (p === "starting") { return; }
    $("pl-facts").textContent = "Game " + state.game + (state.deals > 1 ? ", deal " + (state.deal + 1) + " of " + state.deals : "") +
      " \u00b7 you are seat " + (state.human + 1) + " \u00b7 " + state.seats.map(function (s, i) { return (i + 1) + ": " + who(i); }).join(", ");
    if (p === "yours") {
      if (ask.claims.length) { status.textContent = "Your turn: claim a domino of the new row (click it)."; }
      else if (ask.discard) { status.textContent = "Your turn: " + board.tileText(ask.domino) + " fits nowhere in your kingdom: discard it."; }
      else {
        status.textContent = "Your turn: place " + board.tileText(ask.domino) + ": click where its first half (" +
          board.tileText(ask.domino).split(" ")[1].split("|")[0] + ") goes" + (pick ? ", then where its second half goes." : ".");
      }
    } else if (p === "theirs") {
      status.textContent = state.over ? "The deal is over." : who(state.turn) + " (seat " + (state.turn + 1) + ") is thinking\u2026";
    } else if (p === "over") {
      status.textContent = outcome(state.result) + " It is stored.";
    } else if (p === "done") {
      status.textContent = (state.result ? outcome(state.result) + " " : "") + state.done;
    }
    $("pl-discard").hidden = !(p === "yours" && ask.discard);
    $("pl-cancel").hidden = !(p === "yours" && pick);
    $("pl-next").hidden = !(p === "over" && state.more);
    $("pl-close").hidden = p === "done";
    var rows = $("pl-rows");
    rows.textContent = "";
    rows.appendChild(board.rowBox("Placing", state.current || []));
    rows.appendChild(board.rowBox("To choose", state.next || [], function (d) {
      return p === "yours" && ask.claims.indexOf(d[0]) >= 0;
    }));
    var list = $("pl-kingdoms");
    list.textContent = "";
    (state.kingdoms || []).forEach(function (squares, seat) {
      var cells = {};
      squares.forEach(function (q) { cells[q[0] + "," + q[1]] = [q[2], q[3]]; });
      var marks = beyond(squares, size, origin, view);
      if (p === "yours" && seat === state.human && ask.places.length) {
        var seen = {};
        ask.places.forEach(function (q) {
          if (!pick && !seen[q[0] + "," + q[1]]) { marks.push({ r: q[0], c: q[1], cls: "target" }); }
          if (pick && q[0] === pick[0] && q[1] === pick[1]) { marks.push({ r: q[2], c: q[3], cls: "target second" }); }
          seen[q[0] + "," + q[1]] = true;
        });
        if (pick) { marks.push({ r: pick[0], c: pick[1], cls: "picked" }); }
      }
      var ended = (p === "over" || p === "done") && state.result;
      var li = board.seatItem(seat, who(seat), ended ? state.result.scores[seat] : state.scores[seat],
        board.kingdomSvg(cells, view, origin, marks), state.turn === seat && !state.over, ended);
      if (seat === state.human) { li.className += " featured"; }
      list.appendChild(li);
    });
    var log = $("pl-log");
    log.textContent = "";
    state.log.forEach(function (line) { var li = document.createElement("li"); li.textContent = line; log.appendChild(li); });
  }

  document.addEventListener("click", function (e) {
    if (phase() !== "yours") { return; }
    var claim = e.target.closest("button[data-claim]");
    if (claim) { move({ claim: +claim.getAttribute("data-claim") }); return; }
    var cell = e.target.closest("rect.target");
    if (!cell) { return; }
    var rc = cell.getAttribute("data-cell").split(" ").map(Number);
    if (!pick) { pick = rc; draw(); return; }
    var chosen = pick;
    pick = null;
    move({ place: [chosen[0], chosen[1], rc[0], rc[1]] });
  });
  $("pl-discard").addEventListener("click", function () { move({ discard: true }); });
  $("pl-cancel").addEventListener("click", function () { pick = null; draw(); });
  $("pl-next").addEventListener("click", function () { post("/next"); });
  $("pl-close").addEventListener("click", function () {
    stopped = true;
    post("/close").then(function () {
      root.setAttribute("data-phase", "closed");
      status.textContent = "You stopped: the games that ended are stored. You can close this tab.";
    });
  });

  function poll() {
    if (stopped) { return; }
    fetch("/state?since=" + (state ? state.version : -1))
      .then(function (r) { return r.json(); })
      .then(function (s) {
        if (!state || s.version !== state.version) {
          if (!s.ask) { pick = null; }
          state = s;
          draw();
        }
        if (s.phase !== "done") { poll(); }
      })
      .catch(function (e) {
        if (stopped) { return; }
        errorText.textContent = "kdtourney is not answering (" + e + "): is the command still running?";
        setTimeout(poll, 2000);
      });
  }
  poll();
  document.body.setAttribute("data-ready", "ok");
})();
