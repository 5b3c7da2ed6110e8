"""What every engine kernel shares: the grid, the planes of a kingdom, the actions, bit helpers.

Actions and bounding boxes use a G x G grid (G = 13), castle at (CENTER, CENTER). A kingdom is a
set of planes (OCC, terrains 1..6, CROWN1, CROWN2, NEAR + t), each a set of squares stored by
`word64` (5x5) or `rows` (7x7). The planes and the wrapped-neighbour rule: docs/internals.md.
"""

import numpy as np
from llvmlite import binding as llvm
from llvmlite import ir
from numba import types
from numba.core import cgutils, config
from numba.core.codegen import get_host_cpu_features
from numba.core.extending import intrinsic

from kdtourney.engine import jit
from kdtourney.engine.tiles import TILE_CROWNS, TILE_TERRAIN

G = 13
CENTER = 6
OCC = 0
CROWN1 = 7
CROWN2 = 8
NEAR = 8           # planes NEAR + t (9..14)
PLANES = 15
DIR_ROW = np.array([0, 1, 0, -1], dtype=np.int64)
DIR_COL = np.array([1, 0, -1, 0], dtype=np.int64)

# Actions are ints:
#     0 .. 675        place: (direction * G + row) * G + col; (row, col) is the grid square of half
#                     a, direction is where half b lies from half a: 0 right, 1 down, 2 left, 3 up
#     DISCARD = 676   discard the domino (legal only when it has no legal placement)
#     CLAIM_BASE + n  claim domino number n of the new row (1001 .. 1048)
# A domino with two identical halves is only placed pointing right or down (directions 0 and 1).
N_PLACE_ACTIONS = 4 * G * G
DISCARD = N_PLACE_ACTIONS
CLAIM_BASE = 1000
MAX_ACTIONS = N_PLACE_ACTIONS  # an upper bound on the number of legal actions

# 1 for a domino whose two halves are identical (terrain and crowns)
TILE_SYMMETRIC = np.array([int(TILE_TERRAIN[d, 0] == TILE_TERRAIN[d, 1]
                               and TILE_CROWNS[d, 0] == TILE_CROWNS[d, 1])
                           for d in range(len(TILE_TERRAIN))], dtype=np.int64)
TILE_SYMMETRIC.flags.writeable = False


# ---------------------------------------------------------------------------------------------
# Compiling


def kernel(function=None, *, inline="never", nrt=False, fastmath=False):
    """Decorator of a kernel: `njit(cache=True)` as kdtourney compiles
    (kdtourney.engine.jit.cached_jit: one specialisation per argument type, compiled by one process
    while the others load it).

    Without `nrt`, a kernel allocates nothing and is compiled without Numba's reference counting:
    array arguments of inlined helpers would otherwise be counted in and out in the hot loops (an
    atomic operation and a call each), and LLVM cannot always remove them.

    `inline="always"`: LLVM inlines the kernel into every caller (its `alwaysinline` attribute).
    The kernel is typed and lowered once per signature and linked into its callers, instead of being
    inlined as Numba IR (njit's own `inline="always"`), which types and lowers it again at every
    call site: most of the compile time of the big kernels, and no faster code.

    `fastmath=True`: LLVM may reorder floating-point sums (vectorised dot products; results may
    differ from a strict order in the last bits).

    `@kernel`, `@kernel(inline="always")`, `@kernel(nrt=True)`."""
    if inline not in ("always", "never"):
        raise ValueError(f"inline is 'always' or 'never', not {inline!r}")

    def decorate(f):
        # the default left out: no other kernel changes
        fast = {"fastmath": True} if fastmath else {}
        return jit.cached_jit(f, forceinline=inline == "always", _nrt=nrt, **fast)
    return decorate if function is None else decorate(function)


# ---------------------------------------------------------------------------------------------
# LLVM bit instructions


@intrinsic
def popcount(typingctx, x):
    """Number of set bits of an int64."""
    def codegen(context, builder, signature, args):
        return builder.ctpop(args[0])
    return types.int64(types.int64), codegen


@intrinsic
def trailing_zeros(typingctx, x):
    """Index of the lowest set bit of a non-zero int64."""
    def codegen(context, builder, signature, args):
        return builder.cttz(args[0], ir.Constant(ir.IntType(1), 1))
    return types.int64(types.int64), codegen


@intrinsic
def lshr(typingctx, x, n):
    """x shifted right by n (0 <= n < 64), filling with zeros (`>>` on an int64 copies the sign)."""
    def codegen(context, builder, signature, args):
        return builder.lshr(args[0], args[1])
    return types.int64(types.int64, types.int64), codegen


@intrinsic
def _pdep(typingctx, x, mask):
    def codegen(context, builder, signature, args):
        fnty = ir.FunctionType(ir.IntType(64), [ir.IntType(64), ir.IntType(64)])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.x86.bmi.pdep.64")
        return builder.call(fn, args)
    return types.int64(types.int64, types.int64), codegen


@kernel(inline="always")
def _select_pdep(m, k):
    """Index of the k-th (0-based) set bit of m: BMI2's bit deposit."""
    return trailing_zeros(_pdep(1 << k, m))


@kernel(inline="always")
def _select_halving(m, k):
    """Index of the k-th (0-based) set bit of m: halving by popcounts, no branches on k."""
    pos = 0
    for width in (32, 16, 8, 4, 2, 1):
        low = popcount(m & ((1 << width) - 1))
        up = np.int64(k >= low)
        pos += width * up
        k -= low * up
        m = lshr(m, width * up)
    return pos


def _fast_pdep():
    """True when the code is compiled for a CPU with a fast pdep (AMD before Zen 3 microcodes
    it)."""
    cpu = config.CPU_NAME or llvm.get_host_cpu_name()
    features = config.CPU_FEATURES if config.CPU_FEATURES is not None else get_host_cpu_features()
    return "+bmi2" in features.split(",") and cpu not in ("znver1", "znver2", "generic", "host")


select_bit = _select_pdep if _fast_pdep() else _select_halving


# ---------------------------------------------------------------------------------------------
# Words of squares


@kernel(inline="always")
def neighbours(b, stride):
    """Squares orthogonally next to those of b (wrapped neighbours included)."""
    return (b << 1) | lshr(b, 1) | (b << stride) | lshr(b, stride)


@kernel(inline="always")
def flood(seed, mask, stride):
    """The squares of `mask` connected to `seed` (a subset of mask)."""
    while True:
        grown = (seed | neighbours(seed, stride)) & mask
        if grown == seed:
            return seed
        seed = grown


@kernel(inline="always")
def terrain_points(land, crown1, crown2, stride):
    """Points (squares x crowns) of the territories in `land` (one terrain); only crowned
    territories are flooded, the others score nothing."""
    points = 0
    crowned = land & (crown1 | crown2)
    while crowned:
        comp = flood(crowned & -crowned, land, stride)
        points += popcount(comp) * (popcount(comp & crown1) + 2 * popcount(comp & crown2))
        crowned &= ~comp
    return points


@kernel(inline="always")
def largest_territory(land, stride):
    """Squares of the largest territory in `land` (one terrain)."""
    largest = 0
    while land:
        comp = flood(land & -land, land, stride)
        largest = max(largest, popcount(comp))
        land &= ~comp
    return largest
