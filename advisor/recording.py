"""How the recording commands size trace-cmd's buffers (shared by the capture
recipes and the commands a finding prints for what it lacks)."""

# Per-CPU ring buffer for the recording commands (KiB): absorbs the bursts of page-granular
# events (1-3 M/s under a fast writer) between trace-cmd's reads.
RECORD_BUFFER_KB = 65536
