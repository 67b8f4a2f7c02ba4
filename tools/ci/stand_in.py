"""What the tests of the Action's scripts (test_pr_review.py, test_install_ply.py) share: a
stand-in server on 127.0.0.1 (a free port, its own thread, shut down on leaving) and a
scratch directory removed on leaving. Only those tests import it.
"""

import contextlib
import http.server
import shutil
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
