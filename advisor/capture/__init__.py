"""Capture recipes: the trace-cmd / blktrace commands that record what rules need."""
