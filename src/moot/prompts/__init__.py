"""Prompt templates (Jinja, package data) and their rendering."""
