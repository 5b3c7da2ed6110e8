// greedy_bot.js: a Kingdomino bot in JavaScript (Node) that speaks KDTP/1 (kdtourney's
// docs/protocol.md).
//
// Strategy: claim the free domino with the most crowns (the higher number on a tie); place the
// domino where the kingdom scores most right after placing it (the first such placement on a tie).
//
// Run: node greedy_bot.js     (js-greedy.toml does; nothing to build or install)
"use strict";

const readline = require("readline");

let seat = 0;
const dominoes = {};  // number -> [[terrain a, crowns a], [terrain b, crowns b]]

function send(message) {
  process.stdout.write(JSON.stringify(message) + "\n");
}

// Sum over territories (4-connected squares of one terrain) of squares x crowns.
function score(squares) {  // squares: Map "r,c" -> [terrain, crowns]
  const seen = new Set();
  let total = 0;
  for (const [start, [terrain]] of squares) {
    if (terrain === "C" || seen.has(start)) continue;
    let size = 0, crowns = 0;
    const stack = [start];
    seen.add(start);
    while (stack.length) {
      const key = stack.pop();
      const [r, c] = key.split(",").map(Number);
      size += 1;
      crowns += squares.get(key)[1];
      for (const [dr, dc] of [[1, 0], [-1, 0], [0, 1], [0, -1]]) {
        const next = `${r + dr},${c + dc}`;
        const square = squares.get(next);
        if (square && square[0] === terrain && !seen.has(next)) {
          seen.add(next);
          stack.push(next);
        }
      }
    }
    total += size * crowns;
  }
  return total;
}

function claim(legal) {
  const crowns = (n) => dominoes[n][0][1] + dominoes[n][1][1];
  return legal.reduce((best, a) => {
    const k = crowns(a.claim), bk = crowns(best.claim);
    return k > bk || (k === bk && a.claim > best.claim) ? a : best;
  });
}

function place(state, legal) {
  const mine = new Map(state.kingdoms[seat].map(([r, c, t, k]) => [`${r},${c}`, [t, k]]));
  const halves = dominoes[state.to_place];
  let best = legal[0], bestScore = -1;  // a lone {"discard": true} stays the answer
  for (const action of legal) {
    if (!action.place) continue;
    const after = new Map(mine);
    action.place.forEach(([r, c], half) => after.set(`${r},${c}`, halves[half]));
    const s = score(after);
    if (s > bestScore) {
      best = action;
      bestScore = s;
    }
  }
  return best;
}

readline.createInterface({ input: process.stdin }).on("line", (line) => {
  const message = JSON.parse(line);
  switch (message.type) {
    case "hello":
      send({ type: "hello", name: "js-greedy", version: "1.0" });
      break;
    case "game":
      seat = message.seat;
      for (const [n, ta, ka, tb, kb] of message.dominoes) dominoes[n] = [[ta, ka], [tb, kb]];
      break;
    case "act": {
      const legal = message.legal;
      send({ type: "action",
             action: message.phase === "claim" ? claim(legal) : place(message.state, legal) });
      break;
    }
    case "quit":
      process.exit(0);
    // "result", and anything a later protocol adds: nothing to say
  }
});
