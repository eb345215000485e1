"""`advisor report`: one self-contained HTML page per incident — findings with their
evidence, charts of the incident on a shared time axis, the replay side by side."""

from advisor.report.compose import build

__all__ = ["build"]
