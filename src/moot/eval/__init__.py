"""moot eval: run protocols over a dataset of questions with known answers and compare their accuracy,
calls and tokens (single agent, self-consistency and debate at equal compute)."""
