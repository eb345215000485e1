"""Writeback Advisor."""
