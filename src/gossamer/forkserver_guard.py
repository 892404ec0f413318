"""Imported by the workers' forkserver alone (``spawning.py`` preloads it): the server dies
with the coordinator that started it, at once.

Data flow: ``gossamer crawl`` (the coordinator) -> the forkserver (imports **this** first) ->
the ``--workers`` processes it forks. Each worker asks Linux to kill it when its parent, the
forkserver, dies (``engine/worker.py``); this asks the same for the forkserver when its own
parent, the coordinator, dies. So a ``kill -9`` of the coordinator ends the workers within
the kernel's own signal delivery, as it did when the coordinator was their parent: a worker
never crawls on alone. (The server would end by itself too, once it saw its pipe to the
coordinator close, but only after its interpreter's shutdown, some hundred ms.)

Importing this module anywhere else would tie that process to its parent: nothing else does.
"""

from __future__ import annotations

from gossamer.spawning import tie_to_parent

tie_to_parent()
