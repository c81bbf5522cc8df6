"""Browser tests: the web page driven in headless chromium (Playwright) against the real app."""
