from dnn64build.atomic_write import write_if_changed


def test_an_identical_file_is_left_untouched(tmp_path):
    target = tmp_path / "out" / "x.z64"
    assert write_if_changed(target, b"abc")
    before = target.stat().st_mtime_ns
    assert not write_if_changed(target, b"abc")
    assert target.stat().st_mtime_ns == before and target.read_bytes() == b"abc"
    assert write_if_changed(target, b"abcd")
    assert target.read_bytes() == b"abcd"
    assert sorted(p.name for p in target.parent.iterdir()) == ["x.z64"]
