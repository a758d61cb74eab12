"""`qct bench`: qct's kernels timed against the bytes they must move, the copy bandwidth of the same
run, PyTorch peers of the same contract, and qct's own unfused chain (docs/performance.md).

Modules: floor (the fewest bytes a kernel must move), timing (CUDA-event timing with rotated
buffers, copy bandwidth), peers (PyTorch eager / torch.compile implementations of the contract),
sass (16-byte load/store counts from cuobjdump), suite (what is measured, in what order),
report (JSON, markdown table, plot).
"""
