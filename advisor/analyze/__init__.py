"""`advisor analyze`: the capture's facts and the rules' findings, as one document."""

from advisor.analyze.document import capture_facts, diagnose

__all__ = ["capture_facts", "diagnose"]
