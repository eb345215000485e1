"""Rules: one declarative file per documented problem (rules/*.toml), and the engine that runs them."""

from advisor.rules.engine import Finding, analyze, run_rule
from advisor.rules.loader import load_rule, load_rules, rules_dir
from advisor.rules.model import SEVERITY, VERDICTS, Rule

__all__ = ["SEVERITY", "VERDICTS", "Finding", "Rule", "analyze", "load_rule", "load_rules", "rules_dir", "run_rule"]
