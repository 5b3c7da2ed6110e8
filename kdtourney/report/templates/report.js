/* kdtourney report: sortable tables and the game viewer (its drawing: board.js). Plain JavaScript,
   no libraries. On success the body gets data-ready="ok"; any error lands in data-errors. */
(function () {
  "use strict";
  var body = document.body;
  function recordError(text) {
    var old = body.getAttribute("data-errors");
    body.setAttribute("data-errors", (old ? old + " | " : "") + text);
  }
  window.onerror = function (message, source, line, col) {
    recordError(String(message) + " (line " + line + ":" + col + ")");
    return false;
  };
  window.addEventListener("unhandledrejection", function (e) { recordError("unhandled rejection: " + e.reason); });

  /* ---------- sortable tables ---------- */
  function cellValue(cell) {
    var v = cell.getAttribute("data-sort");
    if (v === null || v === "") { v = cell.textContent.trim(); }
    var n = parseFloat(String(v).replace("\u2212", "-").replace("%", ""));
    return isNaN(n) ? String(v).toLowerCase() : n;
  }
  function makeSortable(table) {
    var heads = table.tHead ? table.tHead.rows[0].cells : [];
    Array.prototype.forEach.call(heads, function (th, index) {
      th.tabIndex = 0;
      th.setAttribute("aria-sort", "none");
      function sort() {
        var dir = th.getAttribute("aria-sort") === "descending" ? "ascending" : "descending";
        Array.prototype.forEach.call(heads, function (h) { h.setAttribute("aria-sort", "none"); });
        th.setAttribute("aria-sort", dir);
        var tbody = table.tBodies[0];
        var rows = Array.prototype.slice.call(tbody.rows);
        rows.sort(function (a, b) {
          var x = cellValue(a.cells[index]), y = cellValue(b.cells[index]);
          var c = (typeof x === typeof y) ? (x < y ? -1 : x > y ? 1 : 0) : (typeof x === "number" ? -1 : 1);
          return dir === "ascending" ? c : -c;
        });
        rows.forEach(function (r) { tbody.appendChild(r); });
      }
      th.addEventListener("click", sort);
      th.addEventListener("keydown", function (e) {
        if (e.key === "Enter" || e.key === " ") { e.preventDefault(); sort(); }
      });
    });
  }
  Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), makeSortable);

  /* ---------- game viewer ---------- */
  var dataNode = document.getElementById("replay-data");
  if (dataNode) { initViewer(JSON.parse(dataNode.textContent)); }

  /* data: kdtourney/report/replays.py (the traces) and page.replay_view (the games' records) */
  function initViewer(data) {
    var board = window.kdBoard(data);
    var $ = function (id) { return document.getElementById(id); };
    var number = $("rp-number"), slider = $("rp-slider"), pos = $("rp-pos"), moveText = $("rp-move");
    var rowsBox = $("rp-rows"), kingdomsBox = $("rp-kingdoms"), viewer = $("replay-viewer");
    var title = $("rp-title"), playButton = $("rp-play"), speed = $("rp-speed");
    var entrantSelect = $("rp-entrant"), order = $("rp-order"), list = $("rp-list").tBodies[0];
    var pageText = $("rp-page"), PAGE = 20;
    var digit = {};
    for (var i = 0; i < data.digits.length; i++) { digit[data.digits.charAt(i)] = i; }
    var records = data.games, byNumber = {};
    records.forEach(function (r, i) { byNumber[r[0]] = i; });
    var state = { game: null, step: 0, timer: null, page: 0 };

    function ordinal(n) { return n + (n === 1 ? "st" : n === 2 ? "nd" : n === 3 ? "rd" : "th"); }
    /* a record: [game, status, size, entrant per seat, score per seat, rank per seat (0: none),
       seats that forfeited (bits), the deals' traces, frame origins (per deal, per seat: row,
       col), the message of a game the engine could not replay or null, the moves the harness
       played after a fault: [seat, deal, move, what] (that move of the deal and the seat's later
       ones), the notes the bots attached to their moves: [deal, move, text]] */
    function players(r) {
      return r[3].map(function (e, seat) {
        return { seat: seat, name: data.entrants[e], score: r[4][seat], rank: r[5][seat], fault: (r[6] >> seat) & 1 };
      });
    }
    function decode(r) {
      var game = { number: r[0], status: r[1], size: r[2], players: players(r), steps: [], deals: r[7].length };
      var n = game.players.length;
      r[7].forEach(function (text, deal) {
        var at = 0;
        function one() { return digit[text.charAt(at++)]; }
        function two() { var high = one(); return high * 64 + one(); }
        function row() { var out = [], k = one(); for (var j = 0; j < k; j++) { out.push(one()); } return out; }
        var scores = [], kings = [];
        for (var p = 0; p < n; p++) { scores.push(two()); }
        for (var k = one(), j = 0; j < k; j++) { kings.push(one()); }
        game.steps.push({ deal: deal, seat: -1, scores: scores, kings: kings, row: row(),
          origins: r[8].slice(deal * n * 2, (deal + 1) * n * 2) });
        var move = 0;
        while (at < text.length) {
          var op = one(), kind = op >> 2, seat = op & 3;
          if (kind === 3) { game.steps[game.steps.length - 1].row = row(); continue; }
          var step = { deal: deal, seat: seat, kind: kind, domino: one(), move: move++ };
          (r[10] || []).forEach(function (m) {
            if (m[0] === seat && (deal > m[1] || (deal === m[1] && step.move >= m[2]))) { step.harness = m[3]; }
          });
          (r[11] || []).forEach(function (m) { if (m[0] === deal && m[1] === step.move) { step.note = m[2]; } });
          if (kind === 0) { step.action = two(); }
          if (kind !== 2) { step.score = two(); }
          game.steps.push(step);
        }
      });
      return game;
    }
    /* the position after step `upto` of a game: what the engine reported, added up */
    function positionAt(game, upto) {
      var start = upto;
      while (game.steps[start].seat !== -1) { start--; }
      var first = game.steps[start];
      var at = { origins: first.origins, scores: first.scores.slice(), current: [],
        next: first.row.map(function (d) { return [d, -1, 0]; }),
        cells: first.scores.map(function () { return { "0,0": [7, 0] }; }) };
      for (var k = start + 1; k <= upto; k++) {
        var st = game.steps[k];
        if (st.kind === 2) {
          at.next.forEach(function (d) { if (d[0] === st.domino) { d[1] = st.seat; } });
        } else {
          at.scores[st.seat] = st.score;
          at.current.forEach(function (d) { if (d[0] === st.domino) { d[2] = 1; } });
          if (st.kind === 0) {
            var q = data.places.slice(4 * st.action, 4 * st.action + 4), t = data.tiles[st.domino];
            at.cells[st.seat][q[0] + "," + q[1]] = [t[0], t[1]];
            at.cells[st.seat][q[2] + "," + q[3]] = [t[2], t[3]];
          }
        }
        if (st.row) {
          at.current = at.next.map(function (d) { return [d[0], d[1], 0]; });
          at.next = st.row.map(function (d) { return [d, -1, 0]; });
        }
      }
      return at;
    }
    function describe(game, k, at) {
      var st = game.steps[k], text;
      if (st.seat === -1) {
        text = (game.deals > 1 ? "Deal " + (st.deal + 1) + ": " : "") + "start; kings pick in the order " +
          st.kings.map(function (s) { return "seat " + (s + 1); }).join(", ");
      } else {
        text = game.players[st.seat].name + " (seat " + (st.seat + 1) + "): ";
        if (st.kind === 2) { text += "claim " + board.tileText(st.domino); }
        else if (st.kind === 1) { text += "discard #" + st.domino; }
        else {
          var q = data.places.slice(4 * st.action, 4 * st.action + 4);
          text += "place " + board.tileText(st.domino) + " at (" + q[0] + ", " + q[1] + ")-(" + q[2] + ", " + q[3] + ")";
        }
      }
      if (st.note) { text += " \u2014 its note: \u201c" + st.note + "\u201d"; }
      if (st.harness) {  /* not the bot's move: the seat plays on with the first legal move */
        text += " [played by kdtourney, the first legal move: its bot faulted at its " + st.harness + "]";
      }
      if (k === game.steps.length - 1 || game.steps[k + 1].seat === -1) {
        text += " \u2014 " + (game.deals > 1 ? "deal over" : "game over") + ": " +
          game.players.map(function (p) { return p.name + " " + at.scores[p.seat]; }).join(", ");
      }
      return text;
    }
    function draw() {
      var game = state.game, k = state.step, at = positionAt(game, k), acting = game.steps[k].seat;
      slider.value = String(k);
      pos.textContent = k + " / " + (game.steps.length - 1);
      moveText.textContent = describe(game, k, at);
      rowsBox.textContent = "";
      rowsBox.appendChild(board.rowBox("Placing", at.current));
      rowsBox.appendChild(board.rowBox("To choose", at.next));
      kingdomsBox.textContent = "";
      game.players.forEach(function (p) {
        var cells = at.cells[p.seat], origin = at.origins.slice(2 * p.seat, 2 * p.seat + 2);
        var li = board.seatItem(p.seat, p.name, at.scores[p.seat], board.kingdomSvg(cells, game.size, origin),
          acting === p.seat);
        li.setAttribute("aria-label", "Seat " + (p.seat + 1) + ", " + p.name + ": " + at.scores[p.seat] +
          " points, " + (Object.keys(cells).length - 1) + " squares of land");
        kingdomsBox.appendChild(li);
      });
    }
    function go(step) {
      if (!state.game.steps.length) { return; }  /* a game the engine could not replay */
      state.step = Math.max(0, Math.min(state.game.steps.length - 1, step | 0));
      draw();
    }
    function stop() {
      if (state.timer !== null) { clearTimeout(state.timer); state.timer = null; }
      playButton.textContent = "\u25b6 Play";
      playButton.setAttribute("aria-pressed", "false");
    }
    function tick() {
      go(state.step + 1);
      if (state.step >= state.game.steps.length - 1) { stop(); return; }
      state.timer = setTimeout(tick, +speed.value);
    }
    function play() {
      if (state.timer !== null) { stop(); return; }
      if (state.step >= state.game.steps.length - 1) { go(0); }
      playButton.textContent = "\u275a\u275a Pause";
      playButton.setAttribute("aria-pressed", "true");
      state.timer = setTimeout(tick, +speed.value);
    }
    function load(gameNumber) {
      var index = byNumber[gameNumber];
      if (index === undefined) {
        title.textContent = "There is no game " + gameNumber + " in this folder (games " + records[0][0] + " to " +
          records[records.length - 1][0] + ").";
        return false;
      }
      stop();
      var r = records[index];
      state.game = decode(r);
      number.value = String(gameNumber);
      slider.max = String(state.game.steps.length - 1);
      title.textContent = "Game " + gameNumber + ": " + state.game.players.map(function (p) {
        return p.name + (p.rank ? " " + p.score + " (" + ordinal(p.rank) + (p.fault ? ", forfeit" : "") + ")" : "");
      }).join(" \u00b7 ") + (r[9] ? " \u2014 " + r[9] : r[1] === "ok" ? "" : " \u2014 a game with a fault");
      rowsBox.textContent = kingdomsBox.textContent = moveText.textContent = "";
      pos.textContent = "0 / 0";
      go(0);
      return true;
    }
    /* the finder: an entrant's games (or all), in an order, a page at a time */
    function finder() {
      var who = entrantSelect.value === "" ? -1 : +entrantSelect.value, how = order.value, rows = [];
      records.forEach(function (r) {
        var seat = who < 0 ? -1 : r[3].indexOf(who);
        if (who >= 0 && seat < 0) { return; }
        rows.push({ r: r, key: seat >= 0 ? r[4][seat] : Math.max.apply(null, r[4]) });
      });
      var byNumberToo = function (a, b) { return a.r[0] - b.r[0]; };
      if (how === "high") { rows.sort(function (a, b) { return b.key - a.key || byNumberToo(a, b); }); }
      if (how === "low") { rows.sort(function (a, b) { return a.key - b.key || byNumberToo(a, b); }); }
      if (how === "faults") { rows.sort(function (a, b) { return (b.r[1] !== "ok") - (a.r[1] !== "ok") || byNumberToo(a, b); }); }
      var pages = Math.max(1, Math.ceil(rows.length / PAGE));
      state.page = Math.max(0, Math.min(pages - 1, state.page));
      list.textContent = "";
      rows.slice(state.page * PAGE, (state.page + 1) * PAGE).forEach(function (row) {
        var r = row.r, tr = document.createElement("tr");
        var cell = document.createElement("td"), a = document.createElement("a");
        cell.className = "num";
        a.href = "#replay-" + r[0];
        a.className = "replay-link";
        a.textContent = String(r[0]);
        cell.appendChild(a);
        tr.appendChild(cell);
        var who = document.createElement("td");
        who.textContent = players(r).map(function (p) {
          return p.name + (p.rank ? " " + p.score + " (" + ordinal(p.rank) + ")" : "");
        }).join(" \u00b7 ");
        tr.appendChild(who);
        var status = document.createElement("td");
        status.textContent = r[1] === "ok" ? "" : r[6] ? "forfeit" : "failed";
        tr.appendChild(status);
        list.appendChild(tr);
      });
      pageText.textContent = rows.length + " game" + (rows.length === 1 ? "" : "s") + ", page " + (state.page + 1) +
        " of " + pages;
    }
    data.entrants.forEach(function (name, i) {
      var option = document.createElement("option");
      option.value = String(i);
      option.textContent = name;
      entrantSelect.appendChild(option);
    });
    entrantSelect.addEventListener("change", function () { state.page = 0; finder(); });
    order.addEventListener("change", function () { state.page = 0; finder(); });
    $("rp-page-prev").addEventListener("click", function () { state.page--; finder(); });
    $("rp-page-next").addEventListener("click", function () { state.page++; finder(); });

    $("rp-start").addEventListener("click", function () { stop(); go(0); });
    $("rp-prev").addEventListener("click", function () { stop(); go(state.step - 1); });
    $("rp-next").addEventListener("click", function () { stop(); go(state.step + 1); });
    $("rp-end").addEventListener("click", function () { stop(); go(state.game.steps.length - 1); });
    playButton.addEventListener("click", play);
    slider.addEventListener("input", function () { stop(); go(+slider.value); });
    $("rp-show").addEventListener("click", function () { load(+number.value); });
    number.addEventListener("keydown", function (e) {
      if (e.key === "Enter") { e.preventDefault(); load(+number.value); }
    });
    viewer.addEventListener("keydown", function (e) {
      if (e.target.tagName === "INPUT" || e.target.tagName === "SELECT") { return; }
      var keys = { ArrowLeft: -1, ArrowRight: 1 };
      if (e.key in keys) { e.preventDefault(); stop(); go(state.step + keys[e.key]); }
      else if (e.key === "Home") { e.preventDefault(); stop(); go(0); }
      else if (e.key === "End") { e.preventDefault(); stop(); go(state.game.steps.length - 1); }
    });
    /* #replay-N, wherever it is linked from (the finder, the kingdoms' cards, the faults table),
       opens game N */
    function fromHash() {
      var m = /^#replay-(\d+)$/.exec(location.hash);
      if (m && load(+m[1])) { viewer.scrollIntoView(); }
    }
    document.addEventListener("click", function (e) {
      var a = e.target.closest ? e.target.closest("a.replay-link") : null;
      if (a && a.getAttribute("href") === location.hash) { fromHash(); }  /* no hashchange then */
    });
    window.addEventListener("hashchange", fromHash);
    finder();
    $("rp-finder").hidden = records.length < 2;
    var asked = /^#replay-(\d+)$/.exec(location.hash);
    if (!asked || !load(+asked[1])) { load(data.start); }
  }

  body.setAttribute("data-ready", "ok");
})();
