"""Reference implementations for the tests: brute force over every underlying tree
(:mod:`.reference`).  Slow on purpose, and never imported by library code."""
