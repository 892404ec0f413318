"""Gossamer: a polite, concurrent web crawler and search engine.

Data flow: seeds -> frontier -> fetch -> parse -> store (-> index -> rank -> web).
"""

__version__ = "0.1.0"
