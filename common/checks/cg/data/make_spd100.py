#!/usr/bin/env python3
"""Writes spd100.mtx: a small symmetric positive definite matrix for the CG checks and the
compute-sanitizer runs (100 rows, 848 nonzeros).

    python3 common/checks/cg/data/make_spd100.py > common/checks/cg/data/spd100.mtx

It is built to reach the corners of the lessons' kernels that the diffusion grids miss:
- three "hub" rows coupled to 40 others each: rows longer than 32 nonzeros, so an 8-lane
  sub-warp needs several passes (and the quad-based SpMV of lesson 09 more than 8 quads);
- rows that hold only their diagonal: fewer nonzeros than lanes;
- rows of every length in between, irregularly spread, and 100 rows in all: fewer rows
  than the threads of one block.
Off-diagonal entries are negative, every diagonal entry exceeds the sum of its row's
off-diagonal magnitudes (strict diagonal dominance with a positive diagonal and exact
symmetry: positive definite), and the rows are then scaled symmetrically (S A S, S
diagonal, spread over one decade), so Jacobi scaling matters. Fixed seed: the file is the
same on every run. Symmetric storage: the lower triangle, 1-based.
"""
import random

N = 100
HUBS = (0, 37, 71)          # rows coupled to many others
DIAGONAL_ONLY = (50, 98)    # rows with no off-diagonal entry
rng = random.Random(20261122)

pairs = {}  # (i, j) with i > j -> negative value


def couple(i, j):
    if i == j or i in DIAGONAL_ONLY or j in DIAGONAL_ONLY:
        return
    a, b = max(i, j), min(i, j)
    pairs[(a, b)] = -rng.uniform(0.05, 1.0)


for h in HUBS:
    for j in rng.sample(range(N), 40):
        couple(h, j)
for i in range(N):
    for _ in range(rng.choice(range(9))):
        if rng.random() < 0.7:
            j = min(N - 1, max(0, i + rng.choice((-3, -2, -1, 1, 2, 3))))  # near the diagonal
        else:
            j = rng.randrange(N)  # anywhere
        couple(i, j)

off = [0.0] * N
for (i, j), v in pairs.items():
    off[i] += abs(v)
    off[j] += abs(v)
diag = [off[i] * rng.uniform(1.05, 2.0) + rng.uniform(0.1, 1.0) for i in range(N)]
scale = [10 ** rng.uniform(0.0, 1.0) for _ in range(N)]

entries = [(i, i, diag[i] * scale[i] * scale[i]) for i in range(N)]
entries += [(i, j, v * scale[i] * scale[j]) for (i, j), v in pairs.items()]
entries.sort()
print("%%MatrixMarket matrix coordinate real symmetric")
print("% spd100: a 100-row symmetric positive definite test matrix for the CG track;")
print("% written by make_spd100.py beside it (see there for how and why).")
print("%d %d %d" % (N, N, len(entries)))
for i, j, v in entries:
    print("%d %d %.9g" % (i + 1, j + 1, v))
