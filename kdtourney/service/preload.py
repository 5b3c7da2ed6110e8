"""What the workers' fork server loads once, before it forks any worker.

A worker started from scratch spends a second or two of CPU before its first game: importing
kdtourney and Numba, then Numba's first use of its CPU target (which imports its math libraries,
SciPy's BLAS among them where SciPy is installed). The local service starts its workers from a
fork server (multiprocessing's 'forkserver' context) that has done this once, so each worker it
forks, for a command's start, a recycled or a lost worker, or a test, starts in milliseconds.
Nothing here starts a thread: forking this process is safe.
"""

import numba

import kdtourney.service.local_worker  # noqa: F401  - what every worker runs

numba.njit(lambda: 0)()  # the CPU target's first use, not a kernel of ours: no cache is touched
