"""Fixtures for browser tests: a JupyterLab server (with Voila) and headless Chromium.

The server runs on 127.0.0.1 on a free port with a token, over a temporary copy of
notebooks/ (so "Run All" never rewrites the repository's files). Each test's kernels are
shut down through the server's REST API when its page closes (one kernel per notebook no
longer runs until the suite ends), and the server's process group is stopped in every exit
path: the fixture's teardown, the interpreter's exit (atexit), and, on Linux, the death of
the test process itself (the kernel's parent-death signal). Chromium is Debian's (/usr/bin/chromium) driven through Playwright; nothing
downloads a browser. Where chromium or Playwright is missing the tests skip with the
reason, except under CI (CI=true), where they fail: .ci/run installs both.
"""

from __future__ import annotations

import atexit
import ctypes
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("TRAINCOST_CHROMIUM", "/usr/bin/chromium")
SCREENSHOTS = REPO / "build" / "browser-screenshots"
TOKEN = "traincost-browser-test"
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--no-first-run", "--disable-sync",
                  "--disable-quic"]


def _missing(reason: str):
    if os.environ.get("CI"):
        pytest.fail(f"browser tests cannot run in CI: {reason}")
    pytest.skip(reason)


def _die_with_parent():
    """In the server's process: ask Linux to send it SIGTERM when pytest dies (even by
    SIGKILL), so a killed run leaves no server behind."""
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)   # PR_SET_PDEATHSIG
    except OSError:                                      # not Linux: atexit still stops it
        pass


def _stop(proc) -> None:
    """Stop the server's process group: SIGTERM, then SIGKILL after 15 s."""
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def shutdown_kernels(base: str) -> int:
    """Shut down every session and kernel the server runs (REST API); how many kernels."""
    def call(path, method="GET"):
        req = urllib.request.Request(f"{base}{path}", method=method,
                                     headers={"Authorization": f"token {TOKEN}"})
        with urllib.request.urlopen(req, timeout=15) as r:
            body = r.read()
        return json.loads(body) if body else None
    try:
        for s in call("/api/sessions") or []:
            call(f"/api/sessions/{s['id']}", "DELETE")
        kernels = call("/api/kernels") or []
        for k in kernels:
            call(f"/api/kernels/{k['id']}", "DELETE")
        return len(kernels)
    except OSError:                                      # the server is gone already
        return 0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def server(tmp_path_factory):
    """Base URL of a JupyterLab server (Voila extension enabled) over a copy of notebooks/."""
    root = tmp_path_factory.mktemp("nbroot")
    shutil.copytree(REPO / "notebooks", root / "notebooks", dirs_exist_ok=True)
    port = _free_port()
    env = {**os.environ, "CODECARBON_LOG_LEVEL": "error", "MPLBACKEND": "Agg",
           "JUPYTER_CONFIG_DIR": str(root / ".jupyter"), "JUPYTERLAB_SETTINGS_DIR":
           str(root / ".lab-settings"), "JUPYTERLAB_WORKSPACES_DIR": str(root / ".lab-ws")}
    settings = root / ".lab-settings" / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True)
    (settings / "notification.jupyterlab-settings").write_text(
        '{"fetchNews": "false", "checkForUpdates": false}')
    # render every cell (JupyterLab 4 otherwise detaches cells scrolled out of view), and
    # start the notebook's own kernel without asking: now and then JupyterLab 4.6 opened a
    # "Select Kernel" dialog that stayed up whatever the handler below clicked, and a CI run
    # (2026-12-03) timed out behind it (autoStartDefaultKernel, "Automatically Start
    # Preferred Kernel", the tracker's schema)
    nb_settings = root / ".lab-settings" / "@jupyterlab" / "notebook-extension"
    nb_settings.mkdir(parents=True)
    (nb_settings / "tracker.jupyterlab-settings").write_text(
        '{"windowingMode": "none", "autoStartDefaultKernel": true}')
    # the server configuration the README's quick start and Binder use (binder/jupyter-config):
    # Voila typesets LaTeX with its bundled MathJax, not a CDN's
    env["JUPYTER_CONFIG_PATH"] = str(REPO / "binder" / "jupyter-config")
    log = open(root / "server.log", "w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "jupyter", "lab", "--allow-root", "--no-browser",
         "--ip=127.0.0.1", f"--port={port}", f"--IdentityProvider.token={TOKEN}",
         f"--ServerApp.root_dir={root / 'notebooks'}", "--ServerApp.disable_check_xsrf=False",
         "--LabApp.news_url=", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"],
        stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True,
        preexec_fn=_die_with_parent)
    atexit.register(_stop, proc)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"{base}/api/status?token={TOKEN}", timeout=2)
            break
        except OSError:
            if proc.poll() is not None:
                break
            time.sleep(0.25)
    else:
        _stop(proc)
        pytest.fail(f"JupyterLab did not start; log: {(root / 'server.log').read_text()[-2000:]}")
    if proc.poll() is not None:
        pytest.fail(f"JupyterLab exited; log: {(root / 'server.log').read_text()[-2000:]}")
    try:
        yield base
    finally:
        shutdown_kernels(base)
        _stop(proc)
        log.close()


@pytest.fixture(scope="session")
def browser():
    if not Path(CHROMIUM).exists():
        _missing(f"{CHROMIUM} not found (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("playwright is not installed (pip install playwright)")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS,
                              headless=True)
        yield b
        b.close()


def _accept_kernel_dialogs(pg) -> None:
    """Accept every "Select Kernel" dialog on the page, the topmost first, by its button, or
    by Enter (the dialog's default action) when the button cannot be clicked. Once in CI
    (2026-12-02) the dialog stayed open after the handler's single click on the first
    dialog's button, and the test waited out its 60 s."""
    dialogs = pg.locator(".jp-Dialog:has-text('Select Kernel')")
    for _ in range(5):
        if dialogs.count() == 0:
            return
        try:
            dialogs.last.locator(".jp-Dialog-button.jp-mod-accept").first.click(timeout=5_000)
        except Exception:                                   # covered or detached: the default
            pg.keyboard.press("Enter")
        pg.wait_for_timeout(300)


@pytest.fixture
def page(browser, server, request):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    pg = context.new_page()
    pg.set_default_timeout(60_000)
    # Now and then JupyterLab asks which kernel to start ("Select Kernel", the notebook's
    # own kernel preselected) for a notebook whose kernel is already idle; the modal then
    # takes every click meant for the notebook. Accept it whenever it shows up.
    pg.add_locator_handler(pg.locator(".jp-Dialog:has-text('Select Kernel')"),
                           lambda *_: _accept_kernel_dialogs(pg))
    yield pg
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    name = request.node.name.replace("/", "_").replace("[", "-").replace("]", "")
    try:
        pg.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)
    except Exception:                                   # screenshot is a convenience only
        pass
    context.close()
    shutdown_kernels(server)                            # this test's kernels, not the suite's
