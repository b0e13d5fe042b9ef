"""Independent NumPy models of kperf and the checks that hold its kernels to them
(tests/independent_refs.py)."""
