"""Confidence intervals for accuracies."""

from __future__ import annotations

import math


def wilson(correct: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval for `correct` successes in `n` trials (z = 1.96: 95 %). Unlike the normal
    approximation it stays inside [0, 1] and is not zero-width at 0 % or 100 %, which small evaluations hit.
    No trials say nothing: (0.0, 1.0)."""
    if n < 0 or not 0 <= correct <= n:
        raise ValueError(f"need 0 <= correct <= n, got correct={correct}, n={n}")
    if n == 0:
        return 0.0, 1.0
    p = correct / n
    z2 = z * z
    denominator = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denominator
    # At 0 and n the bound is exactly 0 or 1; rounding would leave it a hair off.
    low = 0.0 if correct == 0 else max(0.0, centre - half)
    high = 1.0 if correct == n else min(1.0, centre + half)
    return low, high
