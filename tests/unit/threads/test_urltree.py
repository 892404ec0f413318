"""The Indexed URL Tree: its layout, names no URL can turn against the file system, the
per-path locks, and one data line per URL however many threads file it."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from gossamer.threads.urltree import (
    MAX_NAME_BYTES,
    IndexedUrlTree,
    audit_tree,
    data_line,
    export_lines,
    folder_names,
    url_file_name,
)

LIMIT = 30.0  # seconds a thread may take; only a failing test waits this long


def folder(url: str) -> str:
    return "/".join(folder_names(url))


def test_the_seed_example_is_filed_where_the_seed_files_it(tmp_path: Path) -> None:
    tree = IndexedUrlTree(tmp_path)
    url = "https://en.wikipedia.org/wiki/Concurrency_(computer_science)"
    assert tree.add(url, "https://en.wikipedia.org/", "200 text/html a.warc.gz:0")
    seed_folder = "pr-https/do-en/do-wikipedia/do-org/dr-wiki/dr-Concurrency_(computer_science)"
    file = tmp_path / seed_folder / url_file_name(url)
    assert tree.location(url) == file
    assert file.read_text() == f"{url}\thttps://en.wikipedia.org/\t200 text/html a.warc.gz:0\n"
    assert tree.filed == 1


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("http://a.org/", "pr-http/do-a/do-org"),
        ("http://a.org", "pr-http/do-a/do-org"),
        ("http://a.org:8080/x", "pr-http/do-a/do-org/po-8080/dr-x"),
        ("http://127.0.0.1:9/x", "pr-http/do-127/do-0/do-0/do-1/po-9/dr-x"),
        ("http://[::1]:8080/x/y", "pr-http/do-[::1]/po-8080/dr-x/dr-y"),
        ("https://[2001:db8::1]/", "pr-https/do-[2001:db8::1]"),
        ("http://user:pw@a.org/x", "pr-http/do-a/do-org/dr-x"),
        ("http://a.org/x/?q=1/2", "pr-http/do-a/do-org/dr-x"),
        ("http://a.org/x//y", "pr-http/do-a/do-org/dr-x/dr-/dr-y"),
        ("http://a.org/caf%C3%A9/日本", "pr-http/do-a/do-org/dr-caf%25C3%25A9/dr-日本"),
    ],
)
def test_layout(url: str, expected: str) -> None:
    assert folder(url) == expected


def test_urls_sharing_a_folder_never_share_a_file(tmp_path: Path) -> None:
    tree = IndexedUrlTree(tmp_path)
    urls = ["http://a.org/x", "http://a.org/x/", "http://a.org/x?q=1", "http://a.org/x?q=2"]
    assert {tree.location(url).parent for url in urls} == {tmp_path / "pr-http/do-a/do-org/dr-x"}
    for url in urls:
        assert tree.add(url, "")
    assert audit_tree(tmp_path).url_files == 4


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        (
            "http://a.org/../../etc/passwd",
            "pr-http/do-a/do-org/dr-%2E%2E/dr-%2E%2E/dr-etc/dr-passwd",
        ),
        ("http://a.org/./.hidden/..", "pr-http/do-a/do-org/dr-%2E/dr-%2Ehidden/dr-%2E%2E"),
        ("http://a.org/%2e%2e/%2F", "pr-http/do-a/do-org/dr-%252e%252e/dr-%252F"),
        ("http://a.org/a\\..\\b", "pr-http/do-a/do-org/dr-a%5C..%5Cb"),
        ("http://a.org/nul\x00/tab\t/nl\n", "pr-http/do-a/do-org/dr-nul%00/dr-tab%09/dr-nl%0A"),
        ("http://../x", "pr-http/do-/do-/do-/dr-x"),
        ("http://a.org/\udcff", "pr-http/do-a/do-org/dr-%ED%B3%BF"),
    ],
)
def test_hostile_components_are_escaped(url: str, expected: str) -> None:
    assert folder(url) == expected


HOSTILE = [
    "http://a.org/../../../../outside",
    "http://a.org/%2e%2e/%2e%2e/x",
    "http://../../x",
    "http://a.org/" + "é" * 300,  # 600 bytes in one segment
    "http://a.org/" + "/".join(["s" * 200] * 40),  # 8 KB of path
    "http://" + ".".join(["h"] * 3000) + "/x",  # a host of 3,000 labels
    "http://a.org/" + "%" * 300,
    "http://a.org/\x00/\x01\x7f",
    "http://[::ffff:1.2.3.4]:1/a",
    "http://a.org:" + "9" * 400 + "/x",  # a port of 400 digits
]


def test_no_url_escapes_the_root_or_makes_a_name_too_long(tmp_path: Path) -> None:
    root = tmp_path / "tree"
    tree = IndexedUrlTree(root)
    for url in HOSTILE:
        assert tree.add(url, "http://evil.test/\n\t", "x\ny")
        assert not tree.add(url, "", "again")
    outside = sorted(p.name for p in tmp_path.iterdir())
    assert outside == ["tree"]
    names = [name for _, dirs, files in os.walk(root) for name in dirs + files]
    assert all(len(name.encode("utf-8")) <= MAX_NAME_BYTES for name in names)
    assert not {".", ".."} & set(names)
    for url in HOSTILE:
        file = tree.location(url)
        assert file.resolve().is_relative_to(root.resolve())
        assert len(str(file.relative_to(root)).encode("utf-8")) < 3300
    audit = audit_tree(root)
    assert (audit.url_files, audit.data_lines, audit.duplicate_files) == (
        len(HOSTILE),
        len(HOSTILE),
        0,
    )


def test_long_names_are_cut_and_hashed_without_meeting_others() -> None:
    long_a = folder_names("http://a.org/" + "a" * 300)[-1]
    long_b = folder_names("http://a.org/" + "a" * 301)[-1]
    assert long_a != long_b
    assert len(long_a.encode()) == MAX_NAME_BYTES
    assert long_a.startswith("dr-aaaa") and "%%" in long_a
    # A cut never splits an escape: a head of '%25' escapes ends on a whole one.
    head = folder_names("http://a.org/" + "%" * 300)[-1].split("%%")[0]
    assert head.removeprefix("dr-") == "%25" * ((len(head) - 3) // 3)
    # An escaped name never holds '%%', so no short segment can be named like a hashed one.
    assert "%%" not in folder_names("http://a.org/a%%b")[-1]


def test_a_very_deep_path_folds_its_tail_into_one_folder() -> None:
    names = folder_names("http://a.org/" + "/".join(f"seg{n:03}" for n in range(1000)))
    assert names[-1].startswith("dr-%%")
    assert sum(len(name) + 1 for name in names) < 3000
    other = folder_names("http://a.org/" + "/".join(f"seg{n:03}" for n in range(1001)))
    assert other[:-1] == names[:-1] and other[-1] != names[-1]


def test_data_lines_escape_their_separators() -> None:
    assert data_line("http://a/\t", "s\\rc\n", "d\r") == "http://a/\\t\ts\\\\rc\\n\td\\r\n"


def test_not_an_absolute_url_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not an absolute URL"):
        IndexedUrlTree(tmp_path).add("/relative/path", "")


def test_unknown_hook_points_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown hook points"):
        IndexedUrlTree(tmp_path, hooks={"before_everything": lambda url: None})


def test_the_per_path_lock_is_shared_while_used_and_removed_after(tmp_path: Path) -> None:
    # A holds the lock of the URL's file; B asks for the same lock and must wait for it.
    url = "http://a.org/x"
    a_locked, b_asking, a_may_go = threading.Event(), threading.Event(), threading.Event()
    seen: list[dict[Path, int]] = []

    def locked(_url: str) -> None:
        if threading.current_thread().name == "A":
            a_locked.set()
            a_may_go.wait(LIMIT)

    def locking(_url: str) -> None:
        if threading.current_thread().name == "B":
            seen.append(tree.open_locks())
            b_asking.set()

    def checked(_url: str) -> None:
        if threading.current_thread().name == "B":
            a_locked.wait(LIMIT)  # B passed its first check while the file was absent

    tree = IndexedUrlTree(
        tmp_path, hooks={"locked": locked, "locking": locking, "checked": checked}
    )
    results: dict[str, bool] = {}

    def file(name: str) -> None:
        results[name] = tree.add(url, name)

    a = threading.Thread(target=file, args=("A",), name="A")
    b = threading.Thread(target=file, args=("B",), name="B")
    a.start()
    assert a_locked.wait(LIMIT)
    b.start()
    assert b_asking.wait(LIMIT)
    assert seen == [{tree.location(url): 2}]  # one lock, two users
    a_may_go.set()
    a.join(LIMIT)
    b.join(LIMIT)
    assert results == {"A": True, "B": False}
    assert tree.open_locks() == {}
    assert tree.location(url).read_text().splitlines() == [f"{url}\tA\t"]


def test_a_failing_write_still_removes_its_lock(tmp_path: Path) -> None:
    def fail(_url: str) -> None:
        raise OSError("disk full")

    tree = IndexedUrlTree(tmp_path, hooks={"created": fail})
    with pytest.raises(OSError, match="disk full"):
        tree.add("http://a.org/x", "")
    assert tree.open_locks() == {}
    # The file it had created is gone, so the URL can still be filed.
    assert not tree.location("http://a.org/x").exists()


def test_many_threads_filing_overlapping_urls_file_each_once(tmp_path: Path) -> None:
    # 35 distinct URLs in a list of 40; every thread files the whole list, from its own start.
    urls = [f"http://h{n % 5}.test/p/{n % 7}" for n in range(40)]
    distinct = sorted(set(urls))
    start = threading.Barrier(8)
    filed: list[int] = []

    def crawler(number: int) -> None:
        start.wait(LIMIT)
        mine = 0
        for offset in range(len(urls)):
            mine += tree.add(urls[(number * 5 + offset) % len(urls)], f"crawler-{number}")
        filed.append(mine)

    tree = IndexedUrlTree(tmp_path / "tree")
    threads = [threading.Thread(target=crawler, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(LIMIT)
    assert sum(filed) == len(distinct) == tree.filed
    audit = audit_tree(tmp_path / "tree")
    assert (audit.url_files, audit.data_lines, audit.duplicate_files) == (
        len(distinct),
        len(distinct),
        0,
    )
    assert tree.open_locks() == {}
    count = export_lines(tmp_path / "tree", tmp_path / "res.txt")
    lines = (tmp_path / "res.txt").read_text().splitlines()
    assert count == len(lines) == len(distinct)
    assert sorted(line.split("\t")[0] for line in lines) == distinct


def test_the_audit_finds_a_file_written_twice(tmp_path: Path) -> None:
    tree = IndexedUrlTree(tmp_path, synchronised=False)
    assert tree.add("http://a.org/x", "one")
    assert not tree.add("http://a.org/x", "two")  # the exists-check alone catches this one
    file = tree.location("http://a.org/x")
    with file.open("a") as out:
        out.write(data_line("http://a.org/x", "three", ""))
    audit = audit_tree(tmp_path)
    assert audit.duplicates == ((file, 2),)
