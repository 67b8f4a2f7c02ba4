"""What the tests of the Action's scripts and the CI examples (test_pr_review.py,
test_install_ply.py, test_gitlab_note.py, test_pre_commit_hook.py) share: a stand-in server on
127.0.0.1 (a free port, its own thread, shut down on leaving), a scratch directory removed on
leaving, and release archives laid out as the release workflow publishes them. Only those
tests import it.
"""

import contextlib
import hashlib
import http.server
import os
import shutil
import tarfile
import tempfile
import threading


class Quiet:
    """A request handler mixin that logs nothing (the tests print only what fails)."""

    def log_message(self, *args):
        pass


@contextlib.contextmanager
def serving(handler):
    """Serves `handler` (a request handler class) on 127.0.0.1 at a free port, in a thread,
    and yields the server's URL (`http://127.0.0.1:PORT`); the server stops on leaving."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@contextlib.contextmanager
def scratch(prefix):
    """A new temporary directory (its path), removed with everything in it on leaving."""
    tmp = tempfile.mkdtemp(prefix=prefix)
    try:
        yield tmp
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def release_archive(served, ply, tag, platform="linux-amd64", good=True):
    """Lays out the release archive of `tag` under `served` as the release workflow publishes
    it: `TAG/ply-TAG-PLATFORM.tar.gz` (the directory `ply-TAG-PLATFORM/` holding `ply`, a copy
    of the binary `ply`) and its `.sha256` beside it (a wrong one unless `good`)."""
    name = f"ply-{tag}-{platform}"
    d = os.path.join(served, tag)
    os.makedirs(os.path.join(d, name))
    shutil.copy(ply, os.path.join(d, name, "ply"))
    archive = os.path.join(d, name + ".tar.gz")
    with tarfile.open(archive, "w:gz") as t:
        t.add(os.path.join(d, name), arcname=name)
    shutil.rmtree(os.path.join(d, name))
    with open(archive, "rb") as f:
        digest = hashlib.sha256(f.read() if good else b"something else").hexdigest()
    with open(archive + ".sha256", "w") as f:
        f.write(f"{digest}  {name}.tar.gz\n")
