"""Bodies of the non-HTTP Lambdas (the review fan-out and worker, SPEC §9)."""
