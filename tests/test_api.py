import faultlens


def test_public_api_accepts_text_bytes_and_paths(tmp_path, monkeypatch):
    from conftest import DATA
    monkeypatch.setenv("FAULTLENS_CATALOGUE", str(DATA / "catalogue"))
    text = "RuntimeError: indices should be either on cpu or on the same device as the indexed tensor\n"
    path = tmp_path / "x.log"
    path.write_text(text)
    for source in (text, text.encode(), str(path), path, [str(path)]):
        report = faultlens.diagnose(source)
        assert report.top.id == "demo-generic-index"
