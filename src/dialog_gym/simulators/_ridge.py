"""Ridge regression on sparse rows with plain numpy (conjugate gradients, no scipy)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


class SparseRows:
    """A read-only sparse matrix in compressed-row form: row i is `(indices[i], values[i])`."""

    def __init__(self, rows: Sequence[tuple[np.ndarray, np.ndarray]], n_columns: int):
        lengths = np.fromiter((len(idx) for idx, _ in rows), dtype=np.int64, count=len(rows))
        self.n_rows, self.n_columns = len(rows), n_columns
        self.indices = np.concatenate([idx for idx, _ in rows]).astype(np.int64) if rows else np.zeros(0, np.int64)
        self.values = np.concatenate([val for _, val in rows]).astype(np.float64) if rows else np.zeros(0)
        self.row_of = np.repeat(np.arange(self.n_rows), lengths)
        if self.indices.size and (self.indices.min() < 0 or self.indices.max() >= n_columns):
            raise ValueError(f"column index outside [0, {n_columns})")

    def dot(self, w: np.ndarray) -> np.ndarray:
        """`X @ w`."""
        return np.bincount(self.row_of, weights=self.values * w[self.indices], minlength=self.n_rows)

    def tdot(self, v: np.ndarray) -> np.ndarray:
        """`X.T @ v`."""
        return np.bincount(self.indices, weights=self.values * v[self.row_of], minlength=self.n_columns)

    def column_sq_norms(self) -> np.ndarray:
        return np.bincount(self.indices, weights=self.values**2, minlength=self.n_columns)


def ridge(
    x: SparseRows, y: np.ndarray, penalty: np.ndarray, *, max_iter: int = 500, tol: float = 1e-6, start: np.ndarray | None = None
) -> np.ndarray:
    """The `w` minimising `|x w - y|^2 + sum_j penalty_j w_j^2`.

    Solves the normal equations with Jacobi-preconditioned conjugate gradients from `start`
    (zeros by default; a nearby solution converges in fewer steps); exact up to `tol`
    (relative residual), deterministic.
    """
    y = np.asarray(y, dtype=np.float64)
    penalty = np.asarray(penalty, dtype=np.float64)
    if y.shape != (x.n_rows,) or penalty.shape != (x.n_columns,):
        raise ValueError("ridge: y must have one value per row and penalty one per column")
    if np.any(penalty <= 0):
        raise ValueError("ridge: every penalty must be > 0")
    b = x.tdot(y)
    w = np.zeros(x.n_columns) if start is None else np.array(start, dtype=np.float64)
    diagonal = x.column_sq_norms() + penalty
    residual = b - (x.tdot(x.dot(w)) + penalty * w) if start is not None else b.copy()
    z = residual / diagonal
    direction = z.copy()
    rz = residual @ z
    target = tol * max(np.linalg.norm(b), 1e-12)
    for _ in range(max_iter):
        if np.linalg.norm(residual) <= target:
            break
        product = x.tdot(x.dot(direction)) + penalty * direction
        step = rz / (direction @ product)
        w += step * direction
        residual -= step * product
        z = residual / diagonal
        rz, previous = residual @ z, rz
        direction = z + (rz / previous) * direction
    return w
