"""`make bench`: the benchmarks that are too heavy (or too noisy) to be tests."""
