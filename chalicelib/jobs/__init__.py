"""Bodies of the non-HTTP Lambdas (the review fan-out and worker, docs/reference.md#9-review)."""
