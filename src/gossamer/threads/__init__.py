"""The threaded engine and the seeds' concurrency study (``--engine threads``).

Data flow: seeds -> admission -> a shared frontier under one of six synchronisation
strategies (``frontiers``) -> crawler threads (``crawler``; politeness in ``politeness``,
shared accounting in ``shared``) -> the crawl's usual stores; in seed 000's pipeline also
bounded buffers (``buffers``) -> index builders (``builders``) -> the Indexed URL Tree
(``urltree``). ``engine`` wires a crawl together.
"""

from gossamer.threads.frontiers import STRATEGIES

__all__ = ["STRATEGIES"]
