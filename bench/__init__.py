"""The benchmark of issue 6 (`make bench`)."""
