"""The benchmarks (`make bench`): generated codecs, record batches and the pipeline beside their peers."""
