"""discover.Bundle: every bundle shape yields its members as streams, never extracted; what is not read
(links, devices, fifos, limits, damage) is recorded in `bundle.skipped` with a reason."""
from __future__ import annotations

import gzip
import lzma
import os
import stat
import tarfile
import tempfile
import threading
import zipfile

import pytest
import zstandard

from conftest import compress, displayed, files_under, make_bundle, read_bundle, tar_bytes, write, zip_bytes
from k3logs.ingest.discover import Bundle
from k3logs.ingest.names import sanitize
from k3logs.errors import BundleError
from k3logs.settings import Limits

VLLM = "INFO 08-11 07:35:59 [__init__.py:244] Automatically detected platform cuda.\n"
DMESG = "[ 2207.551903] NVRM: Xid (PCI:0000:18:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.\n"
NCCL = "gpu-node-07:4121:4121 [0] NCCL INFO Bootstrap: Using eth0:10.0.3.17<0>\n"
CASE = {"case-7/node-a/vllm.log": VLLM, "case-7/node-b/dmesg.txt": DMESG}
CASE_DISPLAYED = {"node-a/vllm.log": VLLM.encode(), "node-b/dmesg.txt": DMESG.encode()}


def reasons(bundle: Bundle) -> dict[str, str]:
    return {s.file: s.reason for s in bundle.skipped}


def zstd_one_frame(data: bytes) -> bytes:
    """One frame that declares its size (what `zstd FILE` writes)."""
    return zstandard.ZstdCompressor(write_content_size=True).compress(data)


# ------------------------------------------------------------------------------------------------------
# bundle shapes
# ------------------------------------------------------------------------------------------------------
def test_folder_yields_every_file_with_its_relative_path(tmp_path):
    root = make_bundle(tmp_path, {"node-a/vllm.log": VLLM, "node-b/nccl.log": NCCL, "top.txt": "x\n"})
    b, got = read_bundle(root)
    assert got == {"node-a/vllm.log": VLLM.encode(), "node-b/nccl.log": NCCL.encode(), "top.txt": b"x\n"}
    assert b.skipped == []


def test_folder_keeps_its_single_top_level_folder_in_paths(tmp_path):
    root = make_bundle(tmp_path, {"only/node-a/vllm.log": VLLM, "only/node-b/dmesg.txt": DMESG})
    b, got = read_bundle(root)
    assert set(displayed(b, got)) == {"only/node-a/vllm.log", "only/node-b/dmesg.txt"}


@pytest.mark.parametrize("name,compression", [
    ("case.tar", ""), ("case.tar.gz", "gz"), ("case.tgz", "gz"), ("case.tar.zst", "zst"),
])
def test_tar_archives_yield_members_without_the_shared_top_folder(tmp_path, name, compression):
    path = write(tmp_path, name, tar_bytes(CASE, compression))
    b, got = read_bundle(path)
    assert set(got) == set(CASE)  # stored names...
    assert displayed(b, got) == CASE_DISPLAYED  # ...reported without 'case-7/'
    assert b.skipped == []


def test_zip_yields_members_without_the_shared_top_folder(tmp_path):
    b, got = read_bundle(write(tmp_path, "case.zip", zip_bytes(CASE)))
    assert displayed(b, got) == CASE_DISPLAYED


def test_archive_with_mixed_top_level_names_keeps_full_paths(tmp_path):
    files = {"case-7/vllm.log": VLLM, "README.txt": "notes\n"}
    b, got = read_bundle(write(tmp_path, "case.tar.gz", tar_bytes(files, "gz")))
    assert set(displayed(b, got)) == {"case-7/vllm.log", "README.txt"}


def test_archive_with_only_top_level_files_keeps_their_names(tmp_path):
    b, got = read_bundle(write(tmp_path, "case.zip", zip_bytes({"vllm.log": VLLM, "dmesg.txt": DMESG})))
    assert set(displayed(b, got)) == {"vllm.log", "dmesg.txt"}


@pytest.mark.parametrize("name,compression", [("vllm.log.gz", "gz"), ("vllm.log.zst", "zst")])
def test_single_compressed_file_is_one_member_under_its_own_name(tmp_path, name, compression):
    b, got = read_bundle(write(tmp_path, name, compress(VLLM.encode() * 3, compression)))
    assert displayed(b, got) == {name: VLLM.encode() * 3}


def test_plain_file_is_a_bundle_of_one(tmp_path):
    b, got = read_bundle(write(tmp_path, "server-output.txt", VLLM.encode()))
    assert got == {"server-output.txt": VLLM.encode()}


def test_zst_made_of_several_frames_is_read_whole(tmp_path):
    data = compress(b"frame one\n", "zst") + compress(b"frame two\n", "zst")
    _, got = read_bundle(write(tmp_path, "two.log.zst", data))
    assert got == {"two.log.zst": b"frame one\nframe two\n"}


def skippable_frame(payload: bytes, magic: int = 0x184D2A5E) -> bytes:
    """A zstd skippable frame (what pzstd and the seekable format write: metadata a reader passes over)."""
    return magic.to_bytes(4, "little") + len(payload).to_bytes(4, "little") + payload


@pytest.mark.parametrize("where", ["first", "first, longer than the head", "between and after"])
def test_zst_with_skippable_frames_is_read(tmp_path, where):
    text = "".join(f"line {i} of a log\n" for i in range(5000)).encode()
    frame = zstd_one_frame(text)
    data = {"first": skippable_frame(b"meta") + frame,
            "first, longer than the head": skippable_frame(os.urandom(4096), 0x184D2A50) + frame,
            "between and after": frame + skippable_frame(b"x" * 40) + frame + skippable_frame(b"seek table")}[where]
    b, got = read_bundle(write(tmp_path, "vllm.log.zst", data))
    assert got == {"vllm.log.zst": text * (2 if where == "between and after" else 1)} and b.skipped == []


def test_tar_zst_starting_with_a_skippable_frame_is_opened(tmp_path):
    path = write(tmp_path, "case.tar.zst", skippable_frame(b"meta") + tar_bytes(CASE, "zst"))
    b, got = read_bundle(path)
    assert displayed(b, got) == CASE_DISPLAYED


def test_missing_bundle_is_a_bundle_error(tmp_path):
    with pytest.raises(BundleError, match="no such file"):
        Bundle(tmp_path / "nope.tar.gz")


def test_member_names_are_made_relative_and_safe():
    assert sanitize("/etc/passwd") == "etc/passwd"
    assert sanitize("../../x/./y.log") == "x/y.log"
    assert sanitize("a\\b\\c.log") == "a/b/c.log"
    assert sanitize("..") == "_"


def test_tar_member_with_an_escaping_name_stays_inside_the_bundle(tmp_path):
    b, got = read_bundle(write(tmp_path, "evil.tar", tar_bytes({"../../outside.log": VLLM, "/abs.log": DMESG})))
    assert set(got) == {"outside.log", "abs.log"}
    assert not (tmp_path.parent / "outside.log").exists()


# ------------------------------------------------------------------------------------------------------
# nested archives
# ------------------------------------------------------------------------------------------------------
def test_tar_gz_inside_a_folder_is_opened(tmp_path):
    inner = tar_bytes({"logs/vllm.log": VLLM}, "gz")
    root = make_bundle(tmp_path, {"node-a/logs.tar.gz": inner, "node-a/dmesg.txt": DMESG})
    b, got = read_bundle(root)
    assert got == {"node-a/dmesg.txt": DMESG.encode(), "node-a/logs.tar.gz/logs/vllm.log": VLLM.encode()}


def test_gz_file_inside_a_folder_is_one_member_named_as_stored(tmp_path):
    # report-contract.md: the path relative to the bundle root; its lines are those `zgrep -n` counts
    root = make_bundle(tmp_path, {"node-a/kern.log.gz": gzip.compress(DMESG.encode())})
    _, got = read_bundle(root)
    assert got == {"node-a/kern.log.gz": DMESG.encode()}


def test_zip_inside_a_tar_is_opened(tmp_path):
    inner = zip_bytes({"worker/nccl.log": NCCL})
    path = write(tmp_path, "case.tar", tar_bytes({"case-7/vllm.log": VLLM, "case-7/node-b.zip": inner}))
    b, got = read_bundle(path)
    assert displayed(b, got) == {"vllm.log": VLLM.encode(), "node-b.zip/worker/nccl.log": NCCL.encode()}


def _nested_tars(levels: int) -> bytes:
    """An archive `levels` deep: l1.tar holds l2.tar ... the innermost holds deep.log."""
    data = tar_bytes({"deep.log": VLLM})
    for i in range(levels - 1, 0, -1):
        data = tar_bytes({f"l{i + 1}.tar": data})
    return data


def test_nesting_up_to_the_depth_limit_is_read(tmp_path):
    b, got = read_bundle(write(tmp_path, "l1.tar", _nested_tars(3)), Limits(max_depth=2))
    assert list(got.values()) == [VLLM.encode()]
    assert b.skipped == []


def test_nesting_beyond_the_depth_limit_is_skipped_with_a_reason(tmp_path):
    b, got = read_bundle(write(tmp_path, "l1.tar", _nested_tars(4)), Limits(max_depth=2))
    assert got == {}
    [(file, reason)] = reasons(b).items()
    assert file.endswith("l4.tar") and "nested deeper than 2" in reason


def test_depth_limit_is_the_same_for_an_archive_given_directly_or_inside_a_folder(tmp_path):
    data = _nested_tars(3)
    direct, got_direct = read_bundle(write(tmp_path, "l1.tar", data), Limits(max_depth=2))
    folder, got_folder = read_bundle(make_bundle(tmp_path, {"l1.tar": data}), Limits(max_depth=2))
    assert list(got_direct.values()) == list(got_folder.values()) == [VLLM.encode()]
    assert direct.skipped == folder.skipped == []


# ------------------------------------------------------------------------------------------------------
# links, devices, fifos
# ------------------------------------------------------------------------------------------------------
def _special(name: str, kind: bytes, linkname: str = "") -> tarfile.TarInfo:
    ti = tarfile.TarInfo(name)
    ti.type = kind
    ti.linkname = linkname
    return ti


def test_tar_links_devices_and_fifos_are_skipped_and_recorded(tmp_path):
    extra = [_special("case/etc-link", tarfile.SYMTYPE, "/etc/shadow"),
             _special("case/hard", tarfile.LNKTYPE, "case/vllm.log"),
             _special("case/null", tarfile.CHRTYPE),
             _special("case/disk", tarfile.BLKTYPE),
             _special("case/pipe", tarfile.FIFOTYPE)]
    b, got = read_bundle(write(tmp_path, "case.tar.gz", tar_bytes({"case/vllm.log": VLLM}, "gz", extra)))
    assert set(got) == {"case/vllm.log"}
    why = reasons(b)
    assert set(why) == {"case/etc-link", "case/hard", "case/null", "case/disk", "case/pipe"}
    assert "symbolic link" in why["case/etc-link"] and "hard link" in why["case/hard"]
    assert "device" in why["case/null"] and "device" in why["case/disk"] and "fifo" in why["case/pipe"]


def test_zip_symlink_member_is_skipped_and_recorded(tmp_path):
    link = zipfile.ZipInfo("case/link")
    link.external_attr = (stat.S_IFLNK | 0o777) << 16
    fifo = zipfile.ZipInfo("case/pipe")
    fifo.external_attr = (stat.S_IFIFO | 0o644) << 16
    b, got = read_bundle(write(tmp_path, "case.zip", zip_bytes({"case/vllm.log": VLLM},
                                                               [(link, b"/etc/shadow"), (fifo, b"")])))
    assert set(got) == {"case/vllm.log"}
    why = reasons(b)
    assert "symbolic link" in why["case/link"] and "fifo" in why["case/pipe"]


def test_folder_symlinks_leaving_the_bundle_are_not_followed(tmp_path):
    outside = make_bundle(tmp_path, {"secret.log": "private\n", "dir/also.log": "private\n"}, name="outside")
    root = make_bundle(tmp_path, {"vllm.log": VLLM})
    os.symlink(outside / "secret.log", root / "file-link.log")
    os.symlink(outside / "dir", root / "dir-link")
    b, got = read_bundle(root)
    assert got == {"vllm.log": VLLM.encode()}
    why = reasons(b)
    assert "leaves the bundle" in why["file-link.log"] and "leaves the bundle" in why["dir-link"]


def test_folder_symlink_inside_the_bundle_is_followed(tmp_path):
    root = make_bundle(tmp_path, {"node-a/vllm.log": VLLM})
    os.symlink(root / "node-a" / "vllm.log", root / "current.log")
    _, got = read_bundle(root)
    assert got == {"current.log": VLLM.encode(), "node-a/vllm.log": VLLM.encode()}


def test_dangling_and_looping_folder_links_are_skipped(tmp_path):
    root = make_bundle(tmp_path, {"vllm.log": VLLM})
    os.symlink(root / "missing", root / "dangling")
    os.symlink(root, root / "loop")  # points at the bundle itself
    b, got = read_bundle(root)
    assert got == {"vllm.log": VLLM.encode()}
    assert "dangling" in reasons(b)
    assert "loop" in reasons(b)


def test_fifo_in_a_folder_is_never_opened(tmp_path):
    root = make_bundle(tmp_path, {"vllm.log": VLLM})
    os.mkfifo(root / "pipe")
    result: dict = {}
    t = threading.Thread(target=lambda: result.update(zip(("b", "got"), read_bundle(root))), daemon=True)
    t.start()
    t.join(10)
    if t.is_alive():  # the walker opened the fifo and blocks: unblock it, then fail
        fd = os.open(root / "pipe", os.O_WRONLY | os.O_NONBLOCK)
        os.close(fd)
        t.join(5)
        pytest.fail("discover opened a fifo")
    assert result["got"] == {"vllm.log": VLLM.encode()}
    assert "fifo" in reasons(result["b"])["pipe"]


# ------------------------------------------------------------------------------------------------------
# limits
# ------------------------------------------------------------------------------------------------------
def test_member_larger_than_max_member_bytes_is_read_in_part(tmp_path):
    root = make_bundle(tmp_path, {"big.log": b"x" * 10_000, "small.log": b"y" * 10})
    b, got = read_bundle(root, Limits(max_member_bytes=1000))
    assert got == {"big.log": b"x" * 1000, "small.log": b"y" * 10}
    assert "read only the first 1000 bytes" in reasons(b)["big.log"]
    assert "max-member-bytes" in reasons(b)["big.log"]


def test_bundle_stops_at_max_total_bytes(tmp_path):
    root = make_bundle(tmp_path, {"a.log": b"a" * 600, "b.log": b"b" * 600, "c.log": b"c" * 600})
    b, got = read_bundle(root, Limits(max_total_bytes=1000))
    assert got == {"a.log": b"a" * 600, "b.log": b"b" * 400}
    assert "max-total-bytes" in reasons(b)["b.log"] and "max-total-bytes" in reasons(b)["c.log"]
    assert b.bytes_read == 1000


def test_files_beyond_max_members_are_skipped(tmp_path):
    root = make_bundle(tmp_path, {f"f{i}.log": f"{i}\n" for i in range(5)})
    b, got = read_bundle(root, Limits(max_members=3))
    assert set(got) == {"f0.log", "f1.log", "f2.log"}
    assert set(reasons(b)) == {"f3.log"} and "those after it were not read" in reasons(b)["f3.log"]  # said once


def test_files_of_archives_in_a_folder_beyond_max_members_are_said_once(tmp_path):
    tars = {f"n{k}.tar": tar_bytes({f"n{k}/f{i}.log": f"{i}\n" for i in range(50)}) for k in range(3)}
    b, got = read_bundle(make_bundle(tmp_path, tars), Limits(max_members=60))
    assert len(got) == 60 and len(b.skipped) == 1, b.skipped


def test_tar_members_beyond_max_members_are_skipped(tmp_path):
    path = write(tmp_path, "case.tar", tar_bytes({f"c/f{i}.log": f"{i}\n" for i in range(5)}))
    b, got = read_bundle(path, Limits(max_members=2))
    assert set(got) == {"c/f0.log", "c/f1.log"}
    assert any("more than 2" in r for r in reasons(b).values())


def test_gzip_bomb_is_read_only_in_part(tmp_path):
    bomb = gzip.compress(bytes(64 << 20), compresslevel=9)  # 64 MiB of zeros in ~64 KiB
    b, got = read_bundle(write(tmp_path, "zeros.log.gz", bomb), Limits(ratio_grace_bytes=1 << 20, max_ratio=100))
    assert 1 << 20 < len(got["zeros.log.gz"]) <= 100 * len(bomb) + (1 << 20)
    assert "decompression bomb" in reasons(b)["zeros.log.gz"]


def test_bomb_inside_a_tar_gz_is_read_only_in_part(tmp_path):
    bomb = tar_bytes({"case/zeros.log": bytes(64 << 20), "case/vllm.log": VLLM}, "gz")
    b, got = read_bundle(write(tmp_path, "case.tar.gz", bomb), Limits(ratio_grace_bytes=1 << 20, max_ratio=100))
    assert len(got["case/zeros.log"]) <= 100 * len(bomb) + (1 << 20)
    assert "decompression bomb" in reasons(b)["case/zeros.log"]


def gnu_sparse(name: str, realsize: int, data: bytes) -> bytes:
    """A GNU sparse tar member (tarfile cannot write one): `data` stored at offset 0, then a hole up to
    `realsize` that tarfile makes up as zeros when the member is read."""
    ti = tarfile.TarInfo(name)
    ti.type, ti.size, ti.mtime = tarfile.GNUTYPE_SPARSE, len(data), 1_780_000_000
    head = bytearray(ti.tobuf(format=tarfile.GNU_FORMAT))
    head[386:398] = tarfile.itn(0, 12, tarfile.GNU_FORMAT)  # the map's first entry: offset, size
    head[398:410] = tarfile.itn(len(data), 12, tarfile.GNU_FORMAT)
    head[483:495] = tarfile.itn(realsize, 12, tarfile.GNU_FORMAT)  # the size it declares (base-256 if large)
    head[148:156] = b" " * 8
    head[148:156] = b"%06o\0 " % sum(head)
    return bytes(head) + data + bytes(-len(data) % 512)


def sparse_bomb(members: int = 4, declared: int = 16 << 30) -> bytes:
    """A plain tar of a few KB whose sparse members declare `declared` bytes each (64 GiB in all)."""
    text = "".join(f"INFO 08-11 07:30:{i % 60:02d} [x.py:1] filler {i}\n" for i in range(90)).encode()
    return b"".join(gnu_sparse(f"case/huge-{k}.log", declared, text) for k in range(members)) + bytes(1024)


@pytest.mark.parametrize("compression", ["", "gz"])
def test_sparse_tar_members_are_held_to_the_ratio_limit_over_the_archive(tmp_path, compression):
    """A sparse member's holes are zeros tarfile makes up: no stream limit saw them (a 17 KB tar gave 64 GiB)."""
    data = compress(sparse_bomb(), compression)
    path = write(tmp_path, f"case.tar{'.' + compression if compression else ''}", data)
    assert len(data) < 20_000
    grace = 1 << 20
    b = Bundle(path, Limits(ratio_grace_bytes=grace, max_ratio=10))
    got = {m.path: len(m.stream.read()) for m in b.members()}
    assert len(got) == 4 and all(n >= 3000 for n in got.values())  # every member's stored text is read
    assert b.bytes_read <= grace + 4 * 4096  # the zeros made up, over the whole archive
    assert "decompression bomb" in reasons(b)["case/huge-0.log"]
    assert all("sparse member" in reasons(b)[f"case/huge-{k}.log"] for k in (1, 2, 3)), reasons(b)


def test_sparse_tar_members_within_the_ratio_are_read_whole(tmp_path):
    text = b"a sparse log: its writer skipped ahead\n"
    path = write(tmp_path, "case.tar", gnu_sparse("case/s.log", 4096 + len(text), text) + bytes(1024))
    b, got = read_bundle(path)
    assert got == {"case/s.log": text + bytes(4096)} and b.skipped == []


def test_ordinary_compressed_text_is_not_taken_for_a_bomb(tmp_path):
    text = "".join(f"INFO 08-11 07:35:{i % 60:02d} [core.py:{i}] step {i} done\n" for i in range(50_000)).encode()
    b, got = read_bundle(write(tmp_path, "vllm.log.gz", gzip.compress(text)), Limits(ratio_grace_bytes=1 << 10))
    assert got["vllm.log.gz"] == text and b.skipped == []


# ------------------------------------------------------------------------------------------------------
# damage
# ------------------------------------------------------------------------------------------------------
def test_truncated_gzip_yields_what_was_readable_and_records_the_damage(tmp_path):
    text = "".join(f"line {i} of a log that was cut while copying\n" for i in range(20_000)).encode()
    data = gzip.compress(text)
    b, got = read_bundle(write(tmp_path, "vllm.log.gz", data[: len(data) // 2]))
    part = got["vllm.log.gz"]
    assert len(text) // 4 < len(part) < len(text) and text.startswith(part)  # all but the last bit of data
    assert "truncated or corrupt" in reasons(b)["vllm.log.gz"]


def test_truncated_zst_yields_what_was_readable_and_records_the_damage(tmp_path):
    text = "".join(f"line {i} of a log that was cut while copying\n" for i in range(20_000)).encode()
    data = zstd_one_frame(text)
    b, got = read_bundle(write(tmp_path, "vllm.log.zst", data[: len(data) // 2]))
    part = got["vllm.log.zst"]
    assert len(text) // 4 < len(part) < len(text) and text.startswith(part)
    assert "truncated or corrupt" in reasons(b)["vllm.log.zst"]


def test_corrupt_xz_yields_what_decoded_before_the_damage(tmp_path):
    """lzma's own reader decodes 8 KiB of input at a time: damage in the first 8 KiB gave nothing at all."""
    text = "".join(f"line {i} of a log {i * 7919 % 10007:05d}\n" for i in range(20_000)).encode()
    data = bytearray(lzma.compress(text))
    data[3000:3064] = bytes(b ^ 0x55 for b in data[3000:3064])
    b, got = read_bundle(write(tmp_path, "vllm.log.xz", bytes(data)))
    part = got["vllm.log.xz"]
    assert len(part) > 4000 and text.startswith(part)
    assert "truncated or corrupt" in reasons(b)["vllm.log.xz"]


def test_xz_made_of_several_streams_is_read_whole(tmp_path):
    text = b"a line\n" * 1000
    b, got = read_bundle(write(tmp_path, "x.log.xz", lzma.compress(text) + bytes(8) + lzma.compress(text)))
    assert got == {"x.log.xz": text * 2} and b.skipped == []


def test_corrupt_gzip_data_is_recorded_not_raised(tmp_path):
    data = bytearray(gzip.compress(b"some text\n" * 1000))
    data[20:40] = b"\xff" * 20
    b, got = read_bundle(write(tmp_path, "x.log.gz", bytes(data)))
    assert "corrupt" in reasons(b)["x.log.gz"]
    assert set(got) <= {"x.log.gz"}


def test_truncated_tar_gz_keeps_the_members_before_the_damage(tmp_path):
    files = {"case/a.log": VLLM * 10, "case/b.log": os.urandom(200_000).hex()}
    data = tar_bytes(files, "gz")
    b, got = read_bundle(write(tmp_path, "case.tar.gz", data[: int(len(data) * 0.7)]))
    assert got["case/a.log"] == (VLLM * 10).encode()
    assert len(got.get("case/b.log", b"")) < len(files["case/b.log"])
    assert b.skipped, "the damage must be recorded"


def test_corrupt_zip_is_recorded_not_raised(tmp_path):
    b, got = read_bundle(write(tmp_path, "case.zip", b"PK\x03\x04" + b"\x00" * 100))
    assert got == {} and "corrupt zip" in reasons(b)["case.zip"]


# ------------------------------------------------------------------------------------------------------
# nothing is extracted
# ------------------------------------------------------------------------------------------------------
def test_reading_archives_writes_nothing_to_disk(tmp_path, monkeypatch):
    nested = tar_bytes({"inner/nccl.log": NCCL}, "gz")
    write(tmp_path, "case.tar.zst", tar_bytes({**CASE, "case-7/node-c/more.tar.gz": nested}, "zst"))
    write(tmp_path, "case.zip", zip_bytes({**CASE, "case-7/node-c.zip": zip_bytes({"x.log": VLLM})}))
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.chdir(scratch)
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    before = files_under(tmp_path)
    for name in ("case.tar.zst", "case.zip"):
        _, got = read_bundle(tmp_path / name)
        assert len(got) >= 3
    assert files_under(tmp_path) == before


def test_corrupt_zst_data_is_recorded_not_raised(tmp_path):
    data = bytearray(zstd_one_frame(b"some text that repeats\n" * 5000))
    data[30:60] = b"\xff" * 30
    b, got = read_bundle(write(tmp_path, "x.log.zst", bytes(data)))
    assert "corrupt" in reasons(b)["x.log.zst"]
