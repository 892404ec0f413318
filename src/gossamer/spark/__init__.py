"""Spark engine: ``gossamer rank`` and ``gossamer index`` run as Apache Spark jobs
(``--engine spark``), for crawls larger than one machine, or spread over several folders.

Data flow: crawl folders (each worker's ``crawl.db`` and WARC files) -> **spark** ->
the same files the local engine writes (``DIR/rank``, ``DIR/index``) -> search. PySpark is
the ``spark`` extra and Java 17 its runtime (``session``); nothing here is imported unless
``--engine spark`` is asked for. ``linkgraph`` reads the link graph of the folders in Spark
tasks, ``pagerank`` iterates over it as DataFrames, ``ranker`` saves the ranks with the
local engine's writer.
"""
