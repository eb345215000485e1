"""Rules: one declarative file per documented problem (advisor/problems/*/rule.toml), and the engine that runs them."""

from advisor.rules.engine import Finding, analyze, run_rule
from advisor.rules.loader import load_rule, load_rules, user_rules_dir
from advisor.rules.model import SEVERITY, VERDICTS, Rule

__all__ = ["SEVERITY", "VERDICTS", "Finding", "Rule", "analyze", "load_rule", "load_rules", "run_rule", "user_rules_dir"]
