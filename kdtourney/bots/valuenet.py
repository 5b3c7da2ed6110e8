"""Value networks: a learned evaluation of positions, as weights files the search bots load.

A weights file (`.npz`, written by `save` from examples/learned/train.py) holds one network for one
game of Kingdomino: the float32 arrays w1, b1, w2, b2, w3, b3 of `net_kernels` (two ReLU layers,
two outputs: the final victory margin and own / (own + best other) for the viewer, from the
features of `net_kernels`), and `meta`, a JSON text: the rules it was trained for (`RULE_FIELDS`)
and how it was trained. The kernels run it; no training library is needed to play.

The networks that ship with kdtourney are the files of kdtourney/bots/weights/ (`SHIPPED`).
"""

import functools
import json
from pathlib import Path

import numpy as np

from kdtourney.bots import net_kernels as NK

KDTOURNEY_FILES = ["weights"]  # the shipped networks: part of the identity of the bots that
                               # load them
WEIGHTS = Path(__file__).resolve().parent / "weights"
SHIPPED = tuple(sorted(WEIGHTS.glob("*.npz")))
LAYERS = ("w1", "b1", "w2", "b2", "w3", "b3")
RULE_FIELDS = ("players", "variant", "three_player", "harmony", "middle_kingdom")
OUTPUTS = 2


def _read_only(arrays):
    """The arrays, read-only: a network's arrays are one type to the kernels (compiled once)."""
    for a in arrays:
        a.flags.writeable = False
    return arrays


def rules_key(rules) -> tuple:
    """What of the rules a network depends on: players, kingdom size, the setup of 3 players and
    the bonuses (the tie-break and the first king order do not change what a position is worth)."""
    d = rules.to_dict() if hasattr(rules, "to_dict") else dict(rules)
    return tuple(d[k] if k != "three_player" or d["players"] == 3 else "-" for k in RULE_FIELDS)


def describe_rules(rules) -> str:
    d = dict(zip(RULE_FIELDS, rules_key(rules)))
    text = f"{d['players']} players"
    if d["variant"] != "standard":
        text += f", {d['variant']}"
    if d["players"] == 3:
        text += f", {d['three_player']} setup"
    bonuses = [name for name, on in (("Harmony", d["harmony"]),
                                     ("Middle Kingdom", d["middle_kingdom"])) if on]
    return text + (", " + " and ".join(bonuses) if bonuses else ", no bonuses")


class ValueNet:
    """One network: `arrays` (the kernels' tuple), the rules it is for, `meta` (how it was made)."""

    def __init__(self, arrays, meta: dict, origin: str = ""):
        self.arrays = arrays
        self.meta = meta
        self.rules = rules_key(meta["rules"])
        self.origin = origin

    @classmethod
    def load(cls, path) -> "ValueNet":
        """The network of a weights file; ValueError (one line naming the file) for one that is
        not a weights file for these kernels."""
        path = Path(path)
        try:
            with np.load(path, allow_pickle=False) as data:
                arrays = {name: data[name] for name in (*LAYERS, "meta")}
            meta = json.loads(str(arrays.pop("meta")))
            key = rules_key(meta["rules"])
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"{path}: not a value network's weights file ({exc})") from None
        layers = tuple(np.ascontiguousarray(arrays[name], dtype=np.float32) for name in LAYERS)
        w1, b1, w2, b2, w3, b3 = layers
        shapes_ok = (w1.ndim == w2.ndim == w3.ndim == 2 and b1.shape == (w1.shape[0],)
                     and w2.shape[1] == w1.shape[0] and b2.shape == (w2.shape[0],)
                     and w3.shape == (OUTPUTS, w2.shape[0]) and b3.shape == (OUTPUTS,))
        if not shapes_ok:
            raise ValueError(f"{path}: the layers' shapes do not chain "
                             f"({', '.join(str(a.shape) for a in layers)})")
        if w1.shape[1] != NK.n_features(key[0]) or key[1] != "standard":
            raise ValueError(f"{path}: its network takes {w1.shape[1]} features; this kdtourney's "
                             f"features of a {key[0]}-player standard game are "
                             f"{NK.n_features(key[0])}: train it again")
        if not all(np.isfinite(a).all() for a in layers):
            raise ValueError(f"{path}: its weights are not all finite numbers")
        return cls(_read_only(layers), meta, str(path))

    def save(self, path):
        """Write the network as a weights file (see the module docstring)."""
        arrays = dict(zip(LAYERS, self.arrays))
        np.savez_compressed(path, meta=np.array(json.dumps(self.meta, sort_keys=True)), **arrays)


@functools.cache
def _load_all(paths: tuple) -> dict:
    nets: dict = {}
    for path in paths:
        net = ValueNet.load(path)
        if net.rules in nets:
            raise ValueError(f"{nets[net.rules].origin} and {path} are both networks for "
                             f"{describe_rules(net.meta['rules'])}: give one")
        nets[net.rules] = net
    return nets


def networks(paths) -> dict:
    """{rules_key: ValueNet} of the weights files `paths` (loaded once per process)."""
    return _load_all(tuple(str(p) for p in paths))


def network_for(paths, rules) -> ValueNet | None:
    """The network of `paths` for these rules, None when there is none."""
    return networks(paths).get(rules_key(rules))
